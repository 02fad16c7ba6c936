"""clink's own protocol checks: signatures, aborts, interrupts, restart,
live updates. Each test drives the real kernel through jupyter_client (and
raw pyzmq sockets where a client library would refuse to misbehave)."""
import hashlib
import hmac
import json
import re
import shutil
import signal
import subprocess
import threading
import time
import unittest
import uuid

import zmq

import kernel_harness as h


class ProtocolTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.km, cls.kc = h.start()

    @classmethod
    def tearDownClass(cls):
        h.stop(cls.km, cls.kc)

    def setUp(self):
        h.drain_iopub(self.kc, 0.05)

    # --- signatures and framing -------------------------------------------

    def raw_socket(self):
        ci = self.km.get_connection_info()
        ctx = zmq.Context.instance()
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.IDENTITY, b"raw-" + uuid.uuid4().hex.encode())
        s.setsockopt(zmq.LINGER, 0)
        s.connect(f"tcp://{ci['ip']}:{ci['shell_port']}")
        return s, ci["key"] if isinstance(ci["key"], bytes) else ci["key"].encode()

    @staticmethod
    def frames(msg_type, key=None, sig=None):
        msg_id = str(uuid.uuid4())
        header = json.dumps({"msg_id": msg_id, "session": "raw", "username": "t",
                             "date": "2024-01-01T00:00:00.000000Z", "msg_type": msg_type,
                             "version": "5.3"}).encode()
        parts = [header, b"{}", b"{}", b"{}"]
        if sig is None:
            mac = hmac.new(key, digestmod=hashlib.sha256)
            for p in parts:
                mac.update(p)
            sig = mac.hexdigest().encode()
        return msg_id, [b"<IDS|MSG>", sig] + parts

    def replies(self, sock, wait):
        got = []
        poller = zmq.Poller()
        poller.register(sock, zmq.POLLIN)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if poller.poll(100):
                fr = sock.recv_multipart()
                i = fr.index(b"<IDS|MSG>")
                got.append(json.loads(fr[i + 3]))  # parent header
        return got

    def test_bad_signatures_truncated_and_replayed_are_dropped(self):
        sock, key = self.raw_socket()
        try:
            bad = []
            mid, fr = self.frames("kernel_info_request", sig=b"")  # unsigned
            bad.append(mid); sock.send_multipart(fr)
            mid, fr = self.frames("kernel_info_request", key=b"wrong key")
            bad.append(mid); sock.send_multipart(fr)
            mid, fr = self.frames("kernel_info_request", key=key)
            bad.append(mid); sock.send_multipart(fr[:4])  # truncated: 2 parts after the signature
            mid, fr = self.frames("kernel_info_request", key=key)
            bad.append(mid); sock.send_multipart([b"<IDS|MSG>"])  # nothing at all
            good, fr = self.frames("kernel_info_request", key=key)
            sock.send_multipart(fr)
            sock.send_multipart(fr)  # replay of a valid message
            parents = [p.get("msg_id") for p in self.replies(sock, 2.0)]
            self.assertEqual(parents, [good], "exactly one reply, to the valid message")
            # And the kernel still serves a real client.
            self.kc.kernel_info()
            reply = self.kc.get_shell_msg(timeout=h.TIMEOUT)
            self.assertEqual(reply["content"]["implementation"], "clink")
            # No busy/idle was published for a dropped message.
            time.sleep(0.2)
            while True:
                try:
                    m = self.kc.get_iopub_msg(timeout=0.2)
                except Exception:
                    break
                self.assertNotIn(m["parent_header"].get("msg_id"), bad)
        finally:
            sock.close()

    def test_reply_headers(self):
        msg_id = self.kc.kernel_info()
        reply = h.shell_reply(self.kc, msg_id)
        hdr = reply["header"]
        self.assertEqual(hdr["version"], "5.3")
        uuid.UUID(hdr["msg_id"])
        li = reply["content"]["language_info"]
        self.assertEqual((li["name"], li["mimetype"], li["file_extension"]), ("sql", "text/x-sql", ".sql"))
        states = [m["content"]["execution_state"] for m in h.of_type(h.collect(self.kc, msg_id), "status")]
        self.assertEqual(states, ["busy", "idle"])

    # --- execution --------------------------------------------------------

    def test_execution_count_and_error(self):
        r1, _ = h.run(self.kc, "SELECT 1;")
        n = r1["content"]["execution_count"]
        r2, msgs = h.run(self.kc, "SELECT 1 FROM no_such_table;")
        self.assertEqual(r2["content"]["status"], "error")
        self.assertEqual(r2["content"]["execution_count"], n + 1)
        errs = h.of_type(msgs, "error")
        self.assertEqual(len(errs), 1)
        self.assertEqual(errs[0]["content"]["ename"], "SQLError")
        self.assertIn("no_such_table", errs[0]["content"]["evalue"])
        r3, msgs = h.run(self.kc, "SELECT 2;", silent=True)
        self.assertEqual(r3["content"]["execution_count"], n + 1, "silent does not count")
        self.assertEqual([m["msg_type"] for m in msgs], ["status", "status"], "silent publishes no output")
        r4, _ = h.run(self.kc, "SELECT 2;", store_history=False)
        self.assertEqual(r4["content"]["execution_count"], n + 1)

    def test_error_position_in_cell(self):
        _, msgs = h.run(self.kc, "SELECT 1;\nSELECT nope\n  FROM bid;")
        tb = "\n".join(h.of_type(msgs, "error")[0]["content"]["traceback"])
        self.assertIn("cell line 2, column 8", tb)
        self.assertIn("SELECT nope\n           ^", tb)

    def test_queued_cells_aborted_after_error(self):
        # The first cell streams for a second, then fails; the two cells
        # queued behind it meanwhile must be aborted, not run.
        first = self.kc.execute("-- clink: rows=1500\nSELECT auction FROM bid;\nSELECT * FROM missing;")
        second = self.kc.execute("SELECT 'second';")
        third = self.kc.execute("SELECT 'third';")
        r1 = h.shell_reply(self.kc, first)
        r2 = h.shell_reply(self.kc, second)
        r3 = h.shell_reply(self.kc, third)
        self.assertEqual(r1["content"]["status"], "error")
        self.assertEqual(r2["content"]["status"], "aborted")
        self.assertEqual(r3["content"]["status"], "aborted")
        self.assertIn("execution_count", r2["content"])
        # The aborted cells produced no output, only busy/idle.
        self.assertEqual([m["msg_type"] for m in h.collect(self.kc, second)], ["status", "status"])
        # A cell sent after the failure runs.
        r4, _ = h.run(self.kc, "SELECT 'after';")
        self.assertEqual(r4["content"]["status"], "ok")

    def test_stop_on_error_false_keeps_queue(self):
        first = self.kc.execute("SELECT * FROM missing;", stop_on_error=False)
        second = self.kc.execute("SELECT 'second';")
        self.assertEqual(h.shell_reply(self.kc, first)["content"]["status"], "error")
        self.assertEqual(h.shell_reply(self.kc, second)["content"]["status"], "ok")

    def ping(self, sock):
        sock.send(b"ping")
        if not sock.poll(3000):
            raise AssertionError("heartbeat did not answer within 3s")
        self.assertEqual(sock.recv(), b"ping")

    def interrupt_streaming(self, interrupt):
        ci = self.km.get_connection_info()
        hb = zmq.Context.instance().socket(zmq.REQ)
        hb.setsockopt(zmq.LINGER, 0)
        hb.connect(f"tcp://{ci['ip']}:{ci['hb_port']}")
        try:
            msg_id = self.kc.execute("SELECT * FROM bid;")
            # Wait until the query is streaming (its live display is up).
            while True:
                m = self.kc.get_iopub_msg(timeout=h.TIMEOUT)
                if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "display_data":
                    break
            for _ in range(3):  # the heartbeat beats while the query runs
                self.ping(hb)
                time.sleep(0.2)
            interrupt()
            reply = h.shell_reply(self.kc, msg_id)
            self.assertEqual(reply["content"]["status"], "error")
            self.assertEqual(reply["content"]["ename"], "Interrupted")
            msgs = h.collect(self.kc, msg_id)
            errs = h.of_type(msgs, "error")
            self.assertEqual([e["content"]["ename"] for e in errs], ["Interrupted"])
            # The rows that arrived stay readable in any frontend.
            res = h.of_type(msgs, "execute_result")
            self.assertEqual(len(res), 1)
            self.assertIn(", interrupted", res[0]["content"]["data"]["text/plain"])
            self.ping(hb)
            r, _ = h.run(self.kc, "SELECT 'still alive';")
            self.assertEqual(r["content"]["status"], "ok")
        finally:
            hb.close()

    def test_interrupt_message_during_streaming_query(self):
        self.interrupt_streaming(self.km.interrupt_kernel)

    def test_sigint_interrupts_query_not_kernel(self):
        self.interrupt_streaming(lambda: self.km.signal_kernel(signal.SIGINT))

    def test_interrupted_explain_analyze_keeps_report(self):
        msg_id = self.kc.execute("EXPLAIN ANALYZE SELECT auction, price FROM bid;")
        time.sleep(1.5)  # the stream runs; only its progress shows until its report
        self.km.interrupt_kernel()
        reply = h.shell_reply(self.kc, msg_id)
        self.assertEqual(reply["content"]["ename"], "Interrupted")
        msgs = h.collect(self.kc, msg_id)
        # The progress display (rows read, no total over a stream; its
        # first drawing HTML only, which jupyter console does not print) is
        # cleared away before the report.
        progress = [m for m in msgs if "display_id" in m["content"].get("transient", {})]
        self.assertTrue(progress)
        self.assertNotIn("text/plain", progress[0]["content"]["data"])
        self.assertRegex(progress[0]["content"]["data"]["text/html"], r"<small>[\d,]+ rows read</small>")
        for u in progress[1:]:
            self.assertRegex(u["content"]["data"]["text/plain"], r"^[\d,]+ rows read$")
        kinds = [m["msg_type"] for m in msgs]
        last_progress = max(msgs.index(m) for m in progress)
        clear = kinds.index("clear_output", last_progress)
        msgs = [m for m in msgs if m not in progress]
        kinds = [m["msg_type"] for m in msgs]
        table = h.of_type(msgs, "display_data")[0]["content"]["data"]
        self.assertIn("<table", table["text/html"])
        self.assertIn("cancelled", table["text/plain"])
        self.assertLess(kinds.index("clear_output"), kinds.index("display_data"))
        self.assertLess(kinds.index("display_data"), kinds.index("error"))
        self.assertGreater(clear, last_progress)

    def test_long_bounded_cell_shows_progress(self):
        """A bounded scan that runs past the delay shows rows read of the
        total in one display updated in place; when the cell ends (here by
        an interrupt) the display is cleared away before what replaces it."""
        h.run(self.kc, "CREATE TABLE IF NOT EXISTS huge WITH ('connector'='nexmark','table'='bid','events.num'='1000000000000');")
        msg_id = self.kc.execute("SELECT max(price) AS m FROM huge;")
        seen = []
        while True:  # until the display has been drawn and updated once
            m = self.kc.get_iopub_msg(timeout=h.TIMEOUT)
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            seen.append(m)
            if m["msg_type"] == "update_display_data":
                break
        self.km.interrupt_kernel()
        reply = h.shell_reply(self.kc, msg_id)
        self.assertEqual(reply["content"]["ename"], "Interrupted")
        msgs = seen + h.collect(self.kc, msg_id)
        disp = h.of_type(msgs, "display_data")
        self.assertEqual(len(disp), 1)
        did = disp[0]["content"]["transient"]["display_id"]
        ups = h.of_type(msgs, "update_display_data")
        self.assertTrue(all(u["content"]["transient"]["display_id"] == did for u in ups))
        # The first drawing is HTML only (jupyter console prints nothing of
        # it and ignores the updates); the updates carry the text too.
        self.assertNotIn("text/plain", disp[0]["content"]["data"])
        self.assertIn("<progress", disp[0]["content"]["data"]["text/html"])
        drawn = [u["content"]["data"] for u in ups]
        for d in drawn:
            # "1,234,567 / 920,000,000,000 rows (0%) read": of the bids' total.
            self.assertRegex(d["text/plain"], r"^[\d,]+ / [\d,]+ rows \(\d+%\) read$")
            self.assertIn("<progress", d["text/html"])
        read = [int(d["text/plain"].split(" ")[0].replace(",", "")) for d in drawn]
        self.assertEqual(read, sorted(read))
        self.assertGreater(read[-1], 0)
        # Cleared away (not left as an empty output) before the error.
        kinds = [m["msg_type"] for m in msgs]
        last_update = len(kinds) - 1 - kinds[::-1].index("update_display_data")
        clear = kinds.index("clear_output")
        self.assertLess(last_update, clear)
        self.assertLess(clear, kinds.index("error"))

    def test_fast_cell_shows_no_progress(self):
        _, msgs = h.run(self.kc, "SELECT 1 AS a;")
        self.assertEqual(h.of_type(msgs, "display_data") + h.of_type(msgs, "update_display_data"), [])

    def test_live_chart_updates(self):
        """A chart over a stream is redrawn while the query runs, then sent
        whole as an output of its own."""
        reply, msgs = h.run(self.kc, "-- clink: chart=point x=auction y=price duration=1500ms\nSELECT auction, price FROM bid;")
        self.assertEqual(reply["content"]["status"], "ok")
        disp = h.of_type(msgs, "display_data")
        self.assertEqual(len(disp), 2)
        did = disp[0]["content"]["transient"]["display_id"]
        ups = h.of_type(msgs, "update_display_data")
        self.assertTrue(all(u["content"]["transient"]["display_id"] == did for u in ups))
        redraws = [u["content"]["data"]["application/vnd.vegalite.v5+json"] for u in ups]
        self.assertGreaterEqual(len(redraws), 2)
        counts = [len(r["data"]["values"]) for r in redraws]
        self.assertEqual(counts, sorted(counts))
        self.assertGreater(counts[-1], 0)
        kinds = [m["msg_type"] for m in msgs]
        self.assertLess(msgs.index(ups[-1]), kinds.index("clear_output"))
        self.assertLess(kinds.index("clear_output"), msgs.index(disp[1]))
        final = disp[1]["content"]["data"]
        self.assertIn("stopped at duration=1.5s", final["text/plain"])
        self.assertGreaterEqual(len(final["application/vnd.vegalite.v5+json"]["data"]["values"]), counts[-1])

    def test_live_updates(self):
        reply, msgs = h.run(self.kc, "-- clink: duration=1500ms\nSELECT auction, price FROM bid;")
        self.assertEqual(reply["content"]["status"], "ok")
        kinds = [m["msg_type"] for m in msgs]
        self.assertEqual(kinds[-1], "status")
        disp = h.of_type(msgs, "display_data")
        self.assertEqual(len(disp), 1)
        did = disp[0]["content"]["transient"]["display_id"]
        ups = h.of_type(msgs, "update_display_data")
        self.assertGreaterEqual(len(ups), 3)
        self.assertTrue(all(u["content"]["transient"]["display_id"] == did for u in ups))
        self.assertLess(kinds.index("display_data"), kinds.index("update_display_data"))
        # The finished table is an execute_result, for frontends that ignore
        # display updates (jupyter console); the live display is cleared
        # away first (clear_output, wait) so JupyterLab does not show the
        # table twice and a saved notebook keeps no emptied display.
        self.assertEqual(disp[0]["content"]["data"]["text/plain"],
                         "streaming: the table follows when the query ends (Ctrl-C or interrupt stops it)")
        res = h.of_type(msgs, "execute_result")
        self.assertEqual(len(res), 1)
        clear = kinds.index("clear_output")
        self.assertEqual(msgs[clear]["content"], {"wait": True})
        self.assertLess(msgs.index(ups[-1]), clear)
        self.assertLess(clear, kinds.index("execute_result"))
        self.assertEqual(res[0]["content"]["execution_count"], reply["content"]["execution_count"])
        final = res[0]["content"]["data"]
        self.assertIn("stopped at duration=1.5s", final["text/plain"])
        self.assertIn("<table", final["text/html"])
        # The tail shows at most 20 rows: header, rule, rows, footer.
        self.assertLessEqual(len(final["text/plain"].splitlines()), 23)

    def test_rows_bound(self):
        reply, msgs = h.run(self.kc, "-- clink: rows=7\nSELECT auction FROM bid;")
        self.assertEqual(reply["content"]["status"], "ok")
        final = h.of_type(msgs, "execute_result")[-1]["content"]["data"]["text/plain"]
        self.assertIn("7 rows, stopped at rows=7", final)
        self.assertNotIn("(", final.splitlines()[-1])

    def test_bounded_result_rendering(self):
        reply, msgs = h.run(self.kc, "SELECT '<b>x</b>' AS s, CAST(NULL AS VARCHAR) AS n, 'NULL' AS t;")
        res = h.of_type(msgs, "execute_result")
        self.assertEqual(len(res), 1)
        data = res[0]["content"]["data"]
        self.assertIn("&lt;b&gt;x&lt;/b&gt;", data["text/html"])
        self.assertNotIn("<b>x</b>", data["text/html"])
        self.assertIn('<span class="null">NULL</span>', data["text/html"])
        self.assertIn("<td>NULL</td>", data["text/html"], "the string 'NULL' is not drawn as NULL")
        # Plain text: SQL NULL bare, the string 'NULL' quoted (as the shell).
        row = [c.strip() for c in data["text/plain"].splitlines()[2].split("|")]
        self.assertEqual(row, ["<b>x</b>", "NULL", "'NULL'"])
        self.assertEqual(data["text/plain"].splitlines()[-1], "1 row, finished")
        self.assertEqual(res[0]["content"]["execution_count"], reply["content"]["execution_count"])

    def test_null_and_string_null_differ_in_every_mime_type(self):
        """SQL NULL and the string 'NULL' never look alike: in a chart's
        Vega-Lite data and its text, a live table's text and HTML, and the
        text output."""
        _, msgs = h.run(self.kc, "-- clink: chart=bar x=s y=n\nSELECT * FROM (VALUES (CAST(NULL AS VARCHAR), 1), ('NULL', 2)) AS t(s, n);")
        d = h.of_type(msgs, "display_data")[-1]["content"]["data"]
        self.assertEqual(d["application/vnd.vegalite.v5+json"]["data"]["values"], [{"s": None, "n": 1}, {"s": "NULL", "n": 2}])
        self.assertEqual([l.split("|")[0].strip() for l in d["text/plain"].splitlines()[2:4]], ["NULL", "'NULL'"])
        # A live table over the stream: half the rows NULL, half 'NULL'.
        _, msgs = h.run(self.kc, "-- clink: rows=8\nSELECT CASE WHEN auction % 2 = 0 THEN 'NULL' END AS s FROM bid;")
        d = h.of_type(msgs, "execute_result")[0]["content"]["data"]
        shown = d["text/plain"].splitlines()[2:-1]
        self.assertEqual(len(shown), 8)
        self.assertTrue(set(shown) <= {"NULL", "'NULL'"}, shown)
        self.assertEqual(d["text/html"].count('<span class="null">NULL</span>'), shown.count("NULL"))
        self.assertEqual(d["text/html"].count("<td>NULL</td>"), shown.count("'NULL'"))
        _, msgs = h.run(self.kc, "-- clink: output=text\nSELECT CAST(NULL AS VARCHAR) AS a, 'NULL' AS b;")
        text = h.of_type(msgs, "stream")[0]["content"]["text"]
        self.assertEqual([c.strip() for c in text.splitlines()[2].split("|")], ["NULL", "'NULL'"])
        self.assertEqual(text.splitlines()[-1], "1 row, finished")

    def test_live_footer_counts_one_row(self):
        _, msgs = h.run(self.kc, "-- clink: rows=1\nSELECT auction FROM bid;")
        final = h.of_type(msgs, "execute_result")[0]["content"]["data"]
        self.assertEqual(final["text/plain"].splitlines()[-1], "1 row, stopped at rows=1")
        self.assertIn("1 row, stopped at rows=1", final["text/html"])

    def test_row_cap(self):
        _, msgs = h.run(self.kc, "-- clink: max_rows=5\nSELECT * FROM 'testdata/parquet/duckdb_types.parquet';")
        text = h.of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"]
        self.assertEqual(text.splitlines()[-1], "600 rows, finished; 595 more rows not shown")
        _, msgs = h.run(self.kc, "SET 'kernel.max_rows' = '3';\nSELECT * FROM 'testdata/parquet/duckdb_types.parquet';")
        self.assertIn("kernel.max_rows", h.of_type(msgs, "stream")[0]["content"]["text"])
        html = h.of_type(msgs, "execute_result")[0]["content"]["data"]["text/html"]
        self.assertEqual(html.count("<tr>"), 4)  # header + 3 rows
        self.assertIn("597 more rows not shown", html)
        h.run(self.kc, "SET 'kernel.max_rows' = '1000';")

    def test_nan_and_infinity_arrive(self):
        reply, msgs = h.run(self.kc, "SELECT CAST('NaN' AS DOUBLE) AS a, CAST('Infinity' AS DOUBLE) AS b, -CAST('Infinity' AS DOUBLE) AS c;")
        if reply["content"]["status"] != "ok":
            self.fail(f"engine refused NaN literals: {reply['content'].get('evalue')}")
        text = h.of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"]
        # DuckDB's spelling (sqlvalue's canonical text): nan, inf, -inf.
        cells = text.splitlines()[2].split("|")
        self.assertEqual([c.strip() for c in cells], ["nan", "inf", "-inf"])

    def test_chart_is_json_object(self):
        reply, msgs = h.run(self.kc, "-- clink: chart=line x=id y=f64\nSELECT id, f64 FROM 'testdata/parquet/duckdb_types.parquet' LIMIT 10;")
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])
        d = h.of_type(msgs, "display_data")[0]["content"]["data"]
        spec = d["application/vnd.vegalite.v5+json"]
        self.assertIsInstance(spec, dict)
        self.assertEqual(spec["mark"]["type"], "line")
        self.assertEqual(len(spec["data"]["values"]), 10)
        self.assertIn("text/plain", d)

    def test_bad_option_is_an_error(self):
        reply, msgs = h.run(self.kc, "-- clink: durration=5s\nSELECT 1;")
        self.assertEqual(reply["content"]["ename"], "OptionError")
        self.assertIn("durration", reply["content"]["evalue"])

    def test_statement_ack_and_explain(self):
        _, msgs = h.run(self.kc, "CREATE TABLE IF NOT EXISTS b10 WITH ('connector'='nexmark','table'='bid','events.num'='10');")
        self.assertIn("b10", h.of_type(msgs, "stream")[0]["content"]["text"])
        # Every EXPLAIN: a stage table (the text plan as its plain form, the
        # document under a vendor type, not application/json, which
        # JupyterLab would rank above the HTML) and a mermaid graph, also as
        # a markdown block for frontends without a mermaid renderer.
        for stmt, plain in (("EXPLAIN SELECT auction FROM b10;", "Scan"),
                            ("EXPLAIN ANALYZE SELECT auction FROM b10;", "Scan"),
                            ("EXPLAIN (FORMAT JSON) SELECT auction FROM b10 WHERE price > 10;", '"stages"')):
            with self.subTest(stmt=stmt):
                r, msgs = h.run(self.kc, stmt)
                self.assertEqual(r["content"]["status"], "ok", r["content"])
                table, graph = [m["content"]["data"] for m in h.of_type(msgs, "display_data")]
                self.assertIn(plain, table["text/plain"])
                self.assertIn("<table", table["text/html"])
                self.assertIn("<td>Scan", table["text/html"])
                self.assertNotIn("application/json", table)
                self.assertIsInstance(table["application/vnd.clink.plan+json"], dict)
                self.assertTrue(graph["text/vnd.mermaid"].startswith("flowchart"))
                self.assertEqual(graph["text/markdown"], "```mermaid\n" + graph["text/vnd.mermaid"] + "```\n")

    def test_comm_and_completion_details(self):
        msg_id = self.kc.comm_info()
        self.assertEqual(h.shell_reply(self.kc, msg_id)["content"]["comms"], {})
        # Cursor counted in code points: 'é' is one.
        msg_id = self.kc.complete("SELECT 'é' FROM bi", cursor_pos=len("SELECT 'é' FROM bi"))
        c = h.shell_reply(self.kc, msg_id)["content"]
        self.assertEqual(c["matches"], ["bid"])
        self.assertEqual((c["cursor_start"], c["cursor_end"]), (16, 18))
        msg_id = self.kc.complete("SELECT pri", cursor_pos=9999)  # clamped
        self.assertEqual(h.shell_reply(self.kc, msg_id)["content"]["cursor_end"], 10)
        msg_id = self.kc.inspect("SELECT coalesce(a, b)", cursor_pos=10)
        c = h.shell_reply(self.kc, msg_id)["content"]
        self.assertTrue(c["found"])
        self.assertIn("coalesce(", c["data"]["text/plain"])
        msg_id = self.kc.inspect("SELECT zzz", cursor_pos=9)
        self.assertFalse(h.shell_reply(self.kc, msg_id)["content"]["found"])


class InspectTests(unittest.TestCase):
    """inspect_request (Shift-Tab in JupyterLab) on tables, columns and
    functions, and completion inside a quoted path, against the real
    engine."""

    @classmethod
    def setUpClass(cls):
        cls.km, cls.kc = h.start()
        r, _ = h.run(cls.kc, "CREATE TABLE types WITH ('connector'='filesystem','format'='parquet','path'='testdata/parquet/duckdb_types.parquet');")
        assert r["content"]["status"] == "ok", r["content"]

    @classmethod
    def tearDownClass(cls):
        h.stop(cls.km, cls.kc)

    def inspect(self, code, cursor):
        c = h.shell_reply(self.kc, self.kc.inspect(code, cursor_pos=cursor))["content"]
        self.assertEqual(c["status"], "ok")
        return c

    def value(self, sql):
        _, msgs = h.run(self.kc, sql)
        return h.of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"].splitlines()[2].split("|")

    def test_table_shows_describe(self):
        c = self.inspect("SELECT * FROM types", 16)
        self.assertTrue(c["found"])
        text = c["data"]["text/plain"]
        self.assertTrue(text.startswith("types (table, connector filesystem, bounded)"), text)
        # DESCRIBE's own table, row for row.
        _, msgs = h.run(self.kc, "DESCRIBE types;")
        desc = h.of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"].splitlines()
        shown = text.splitlines()[1:]
        self.assertEqual(shown[:-1], desc[:-1])
        self.assertIn("<table", c["data"]["text/html"])

    def test_quoted_path_shows_describe(self):
        code = "SELECT * FROM 'testdata/parquet/duckdb_types.parquet' LIMIT 1"
        c = self.inspect(code, code.index("duckdb"))
        self.assertTrue(c["found"])
        text = c["data"]["text/plain"]
        self.assertTrue(text.startswith("testdata/parquet/duckdb_types.parquet (file)"), text)
        _, msgs = h.run(self.kc, "DESCRIBE 'testdata/parquet/duckdb_types.parquet';")
        desc = h.of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"].splitlines()
        self.assertEqual(text.splitlines()[1:-1], desc[:-1])

    def test_column_shows_type_and_file_statistics(self):
        n, lo, hi = [v.strip() for v in self.value("SELECT count(*), min(id), max(id) FROM types;")]
        for code, cur in (("SELECT types.id FROM types", 14), ("SELECT id FROM types", 8)):
            with self.subTest(code=code):
                c = self.inspect(code, cur)
                self.assertTrue(c["found"])
                text = c["data"]["text/plain"]
                self.assertIn("types.id INT (nullable)", text)
                self.assertIn(f"{int(n):,} rows; min {lo}, max {hi}", text)
        c = self.inspect("SELECT price FROM bid", 9)
        self.assertIn("bid.price BIGINT", c["data"]["text/plain"])
        self.assertNotIn("rows", c["data"]["text/plain"], "a stream has no file statistics")

    def test_alias_and_quoted_path_columns(self):
        """b.price with FROM bid b resolves to bid; a column of a quoted
        path in FROM (plain, aliased, read_parquet) shows its type and the
        files' statistics, which agree with a query over the data."""
        c = self.inspect("SELECT b.price FROM bid b", 10)
        self.assertTrue(c["found"])
        self.assertIn("bid.price BIGINT", c["data"]["text/plain"])
        path = "testdata/parquet/duckdb_types.parquet"
        n, lo, hi = [v.strip() for v in self.value(f"SELECT count(*), min(id), max(id) FROM '{path}';")]
        for code in (f"SELECT id FROM '{path}'", f"SELECT t.id FROM '{path}' t WHERE",
                     f"SELECT id FROM read_parquet('{path}') AS r"):
            with self.subTest(code=code):
                c = self.inspect(code, code.index("id") + 1)
                self.assertTrue(c["found"], code)
                text = c["data"]["text/plain"]
                self.assertIn(f"'{path}'.id INT (nullable)", text)
                self.assertIn(f"{int(n):,} rows; min {lo}, max {hi}", text)

    def test_function_shows_signature(self):
        c = self.inspect("SELECT upper(s) FROM types", 9)
        self.assertTrue(c["found"])
        self.assertIn("upper(", c["data"]["text/plain"])

    def test_completion_in_quoted_path_offers_files(self):
        code = "SELECT * FROM 'testdata/parquet/duckdb_ty"
        c = h.shell_reply(self.kc, self.kc.complete(code, cursor_pos=len(code)))["content"]
        self.assertEqual(c["cursor_start"], code.index("'") + 1)
        self.assertIn("testdata/parquet/duckdb_types.parquet", c["matches"])
        self.assertTrue(all(m.startswith("testdata/parquet/duckdb_ty") for m in c["matches"]), c["matches"])


class RestartTests(unittest.TestCase):
    def test_restart_on_same_ports(self):
        km, kc = h.start()
        try:
            before = km.get_connection_info()
            pid = km.provisioner.pid if hasattr(km, "provisioner") and km.provisioner else None
            r, _ = h.run(kc, "SELECT 'before';")
            self.assertEqual(r["content"]["status"], "ok")
            km.restart_kernel(now=False)
            after = km.get_connection_info()
            for p in ("shell_port", "iopub_port", "stdin_port", "hb_port", "control_port"):
                self.assertEqual(before[p], after[p])
            if pid is not None:
                self.assertNotEqual(pid, km.provisioner.pid)
            kc.stop_channels()
            kc = km.client()
            kc.start_channels()
            kc.wait_for_ready(timeout=h.TIMEOUT)
            r, _ = h.run(kc, "SELECT 'after';")
            self.assertEqual(r["content"]["status"], "ok")
            self.assertEqual(r["content"]["execution_count"], 1, "a fresh kernel")
        finally:
            h.stop(km, kc)
        self.assertFalse(km.is_alive())


class ConsoleTests(unittest.TestCase):
    """jupyter console (Debian's jupyter-console) ignores update_display_data:
    a streaming cell must still end with its rows on the terminal."""

    def test_streaming_cell_shows_final_rows(self):
        console = shutil.which("jupyter-console")
        self.assertIsNotNone(console, "jupyter-console not installed (Debian package jupyter-console)")
        p = subprocess.run([console, "--kernel", "clink", "--simple-prompt"],
                           input="SELECT auction, price FROM bid LIMIT 3;\n",
                           capture_output=True, text=True, timeout=120)
        out = p.stdout
        self.assertIn("Out[1]:", out, out + p.stderr)
        final = out[out.index("Out[1]:"):]
        self.assertIn("3 rows, finished", final, out)
        rows = [l for l in final.splitlines() if re.match(r"^\s*\d+ \|\s*\d+$", l)]
        self.assertEqual(len(rows), 3, out)
        # Readable: the final table once, after at most a one-line status;
        # no empty "0 rows, waiting for rows" table, no progress line.
        self.assertEqual(out.count("3 rows, finished"), 1, out)
        self.assertNotIn("waiting for rows", out)
        self.assertNotIn("0 rows", out)
        self.assertNotIn("rows read", out)
        before = out[:out.index("Out[1]:")]
        self.assertLessEqual(before.count("streaming: the table follows"), 1, out)
        self.assertNotIn("auction |", before, out)


    def test_ctrl_c_stops_streaming_cell(self):
        """Ctrl-C in jupyter console (on a pty, as a person types it) stops
        the streaming query: the console gets its prompt back with the rows
        so far and the Interrupted error, and the kernel runs the next cell."""
        import pexpect  # Debian's python3-pexpect
        console = shutil.which("jupyter-console")
        self.assertIsNotNone(console, "jupyter-console not installed (Debian package jupyter-console)")
        c = pexpect.spawn(console, ["--kernel", "clink", "--simple-prompt"], encoding="utf-8",
                          timeout=60, dimensions=(50, 200))
        try:
            c.expect(r"In \[1\]: ")
            c.sendline("SELECT auction, price FROM bid;")
            c.expect("streaming: the table follows")  # the live display's status: the query runs
            time.sleep(1)
            c.sendintr()
            c.expect(r"In \[2\]: ")
            out = c.before
            self.assertIn("Out[1]:", out)
            final = out[out.index("Out[1]:"):]
            self.assertNotIn("waiting for rows", out)
            self.assertEqual(out.count("auction |"), 1, out)  # the table once: the final one
            m = re.search(r"^(\d+) rows, showing the last (\d+), interrupted", final, re.M)
            self.assertIsNotNone(m, final)
            rows = [l for l in final.splitlines() if re.match(r"^\s*\d+ \|\s*\d+$", l)]
            self.assertEqual(len(rows), int(m.group(2)), final)
            self.assertGreater(int(m.group(1)), 0)
            self.assertRegex(final, r"Interrupted: query interrupted after \d+ rows")
            # The query stopped: the kernel serves the next cell.
            c.sendline("SELECT 'alive after ctrl-c' AS s;")
            c.expect(r"In \[3\]: ")
            self.assertIn("alive after ctrl-c", c.before)
            self.assertIn("1 row, finished", c.before)
            c.sendeof()
            c.expect(r"exit")
            c.sendline("y")
            c.expect(pexpect.EOF)
        finally:
            c.close(force=True)


if __name__ == "__main__":
    unittest.main()
