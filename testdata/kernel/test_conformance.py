"""jupyter_kernel_test's conformance suite, subclassed for clink.

Run by scripts/test-kernel with the clink kernelspec installed into a
temporary JUPYTER_DATA_DIR; every test of the suite must pass, none
skipped (a test the suite skips because a sample is missing would be a
hole, so every sample attribute is set).
"""
import unittest

import jupyter_kernel_test


class ClinkKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "clink"
    language_name = "sql"
    file_extension = ".sql"

    # The suite wants "hello, world" on stdout: output=text prints a result
    # as a text table on stdout instead of a rich display.
    code_hello_world = "-- clink: output=text\nSELECT 'hello, world';"

    # A stream's live table is cleared away (clear_output) when the query
    # ends, before its final table.
    code_clear_output = "-- clink: rows=3\nSELECT auction FROM bid;"

    # Statements a cell's bound left unrun are reported on stderr.
    code_stderr = "-- clink: duration=300ms\nSELECT auction FROM bid;\nSELECT 1;"

    completion_samples = [
        {"text": "SELECT * FROM bi", "matches": {"bid"}},
        {"text": "SEL", "matches": {"SELECT", "seller"}},
        {"text": "sel", "matches": {"select", "seller"}},  # auction.seller: no table named, all columns
        {"text": "SELECT * FROM bid WHERE pri", "matches": {"price", "primary"}},
        {"text": "SELECT bid.ch", "matches": {"bid.channel"}},
        {"text": "SELECT coa", "matches": {"coalesce"}},
    ]

    complete_code_samples = ["SELECT 1;", "SELECT 1; SELECT 2;", "", "-- just a comment", "SELECT ';';"]
    incomplete_code_samples = ["SELECT 1", "SELECT 'abc;", "SELECT 1; SELECT", "SELECT /* ; */ 1"]

    code_generate_error = "SELECT nope FROM bid;"

    code_execute_result = [
        {"code": "SELECT 1 + 1 AS two;", "mime": "text/plain"},
        {"code": "SELECT 'a' AS s, 2 AS n;", "mime": "text/html"},
        {"code": "SELECT CAST(NULL AS VARCHAR) AS x;", "mime": "text/html"},
    ]

    code_display_data = [
        # An unbounded query (LIMIT over the nexmark generator) is a live display.
        {"code": "SELECT auction, price FROM bid LIMIT 3;", "mime": "text/html"},
        {"code": "-- clink: chart=bar x=k y=n\nSELECT 'a' AS k, 1 AS n;", "mime": "application/vnd.vegalite.v5+json"},
        {"code": "EXPLAIN SELECT auction FROM bid WHERE price > 10;", "mime": "text/plain"},
    ]

    code_history_pattern = "SELECT 1 + 1*"
    supported_history_operations = ("tail", "range", "search")

    code_inspect_sample = "bid"

    # IPython's convention: `?name` pages the table's columns (or a
    # function's signatures) in the notebook's pager.
    code_page_something = "?bid"


if __name__ == "__main__":
    unittest.main()
