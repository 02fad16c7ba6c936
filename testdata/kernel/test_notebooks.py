"""Every notebook in notebooks/ runs through nbclient with the clink kernel
without errors, and the walkthroughs show what they promise."""
import glob
import os
import shutil
import subprocess
import tempfile
import unittest
from datetime import datetime

import nbformat
from nbclient import NotebookClient

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NOTEBOOKS = os.path.join(ROOT, "notebooks")


def execute(path):
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, kernel_name="clink", timeout=120,
                   resources={"metadata": {"path": os.path.dirname(path)}}).execute()
    return nb


def outputs(cell):
    return cell.get("outputs", [])


def reader_problems(cell):
    """What in a cell's saved outputs is not for a reader: an empty output
    (an emptied progress display or live table), or a running statement's
    transient drawing (its status line, a progress bar)."""
    bad = []
    for o in outputs(cell):
        kind = o.get("output_type")
        if kind == "stream":
            if not o.get("text", "").strip():
                bad.append(f"an empty {o.get('name')} stream")
        elif kind in ("display_data", "execute_result"):
            data = o.get("data", {})
            values = [v for v in data.values() if not (isinstance(v, str) and not v.strip())]
            if not values:
                bad.append(f"an empty {kind}: {data!r}")
            text = data.get("text/plain", "") + data.get("text/html", "")
            for transient in ("streaming: the table follows", "waiting for rows", "clink-progress", ", running"):
                if transient in text:
                    bad.append(f"a transient drawing in {kind}: {transient!r}")
    return bad


def texts(nb):
    """text/plain of every output, in order."""
    out = []
    for c in nb.cells:
        for o in outputs(c):
            if o.get("output_type") == "stream":
                out.append(o["text"])
            elif "data" in o:
                out.append(o["data"].get("text/plain", ""))
    return out


class NotebookTests(unittest.TestCase):
    executed = {}

    @classmethod
    def run_notebook(cls, name):
        if name not in cls.executed:
            cls.executed[name] = execute(os.path.join(NOTEBOOKS, name))
        return cls.executed[name]

    def test_every_notebook_runs_clean(self):
        paths = sorted(glob.glob(os.path.join(NOTEBOOKS, "*.ipynb")))
        self.assertGreaterEqual(len(paths), 3)
        for p in paths:
            with self.subTest(notebook=os.path.basename(p)):
                nb = self.run_notebook(os.path.basename(p))
                self.assertEqual(nb.metadata.kernelspec.name, "clink")
                for c in nb.cells:
                    if c.cell_type != "code":
                        continue
                    self.assertIsNotNone(c.execution_count, c.source)
                    self.assertTrue(outputs(c), f"no output for {c.source!r}")
                    for o in outputs(c):
                        self.assertNotEqual(o["output_type"], "error", f"{c.source!r}: {o.get('evalue')}")
                    # Only what a reader needs: no emptied display left
                    # behind by a progress display or a live table.
                    self.assertEqual(reader_problems(c), [], c.source)

    def test_parquet_walkthrough(self):
        nb = self.run_notebook("parquet_walkthrough.ipynb")
        first = outputs(nb.cells[1])[0]
        self.assertEqual(first["output_type"], "execute_result")
        self.assertIn("<table", first["data"]["text/html"])
        self.assertIn('class="null"', first["data"]["text/html"])
        self.assertIn("\n5 rows, finished", first["data"]["text/plain"])
        all_text = "\n".join(texts(nb))
        for want in ("cat_0", "View 'groups' created.", "Scan"):
            self.assertIn(want, all_text)

    def test_streaming_walkthrough(self):
        nb = self.run_notebook("streaming_nexmark.ipynb")
        # The live display is cleared away at the end: the final table, an
        # execute_result every frontend shows, is the cell's one output.
        live = outputs(nb.cells[1])
        self.assertEqual([o["output_type"] for o in live], ["execute_result"])
        self.assertIn("stopped at duration=3s", live[0]["data"]["text/plain"])
        self.assertIn("<table", live[0]["data"]["text/html"])
        self.assertIn("50 rows", outputs(nb.cells[2])[-1]["data"]["text/plain"])
        self.assertIn("10 rows", outputs(nb.cells[3])[-1]["data"]["text/plain"])
        # An outer join of two streams and a continuous top-n: changelogs,
        # shown applied (the live table has no row-kind column).
        for cell in (nb.cells[5], nb.cells[6]):
            live = outputs(cell)
            self.assertEqual([o["output_type"] for o in live], ["execute_result"], cell.source)
            self.assertIn("stopped at duration=3s", live[0]["data"]["text/plain"])
            self.assertNotIn("+I", live[0]["data"]["text/plain"])
        top = outputs(nb.cells[6])[0]["data"]["text/html"]
        self.assertEqual(top.count("<tr>") - 1, 5, top)  # the header row, then the top 5
        self.assertIn("5 rows after", top)
        # A top-n over a GROUP BY's updating counts: 3 rows, in rank order.
        live = outputs(nb.cells[7])
        self.assertEqual([o["output_type"] for o in live], ["execute_result"], nb.cells[7].source)
        text = live[0]["data"]["text/plain"]
        self.assertIn("stopped at duration=3s", text)
        self.assertNotIn("+I", text)
        self.assertIn("3 rows after", live[0]["data"]["text/html"])
        rows = [[f.strip() for f in line.split("|")] for line in text.splitlines() if "|" in line]
        counts = [int(r[1]) for r in rows if len(r) == 2 and r[0].isdigit() and r[1].isdigit()]
        self.assertEqual(len(counts), 3, text)
        self.assertEqual(counts, sorted(counts, reverse=True), text)
        explain = "\n".join(texts(nb)[-1:])
        self.assertIn("Scan", explain)
        self.assertIn("rows", explain.lower())

    def test_chart_notebook(self):
        nb = self.run_notebook("charts.ipynb")
        charts = [o for c in nb.cells for o in outputs(c)
                  if "application/vnd.vegalite.v5+json" in o.get("data", {})]
        self.assertEqual(len(charts), 3)
        specs = [c["data"]["application/vnd.vegalite.v5+json"] for c in charts]
        for c in charts:
            self.assertIn("text/plain", c["data"])  # the fallback table

        # Top 10: ten bars, drawn in the query's rank order (not sorted by name).
        bar = specs[0]
        self.assertEqual(bar["mark"]["type"], "bar")
        self.assertEqual(bar["encoding"]["x"], {"field": "channel", "type": "nominal", "sort": None})
        values = bar["data"]["values"]
        self.assertEqual(len(values), 10)
        self.assertTrue(all(isinstance(v["bids"], int) for v in values))
        ranked = [(-v["bids"], v["channel"]) for v in values]
        self.assertEqual(ranked, sorted(ranked))

        # The windowed series over the live stream: the live chart is
        # cleared away at the end, the final chart is the cell's output;
        # ended by duration=10s, one point per one-second window, on a time
        # axis.
        cell = next(c for c in nb.cells if c.cell_type == "code" and "TUMBLE" in c.source)
        self.assertEqual([o["output_type"] for o in outputs(cell)], ["display_data"])
        self.assertIs(outputs(cell)[0], charts[1])
        line = specs[1]
        self.assertEqual(line["mark"]["type"], "line")
        self.assertEqual(line["encoding"]["x"]["type"], "temporal")
        self.assertIn("stopped at duration=10s", charts[1]["data"]["text/plain"])
        starts = [datetime.fromisoformat(v["window_start"]) for v in line["data"]["values"]]
        self.assertGreaterEqual(len(starts), 5)
        self.assertEqual({(b - a).total_seconds() for a, b in zip(starts, starts[1:])}, {1.0})
        self.assertTrue(all(isinstance(v["avg_price"], float) for v in line["data"]["values"]))

        # A numeric x axis over Parquet.
        self.assertEqual(len(specs[2]["data"]["values"]), 200)
        self.assertEqual(specs[2]["encoding"]["x"]["type"], "quantitative")

    def test_saved_notebooks_are_executed_and_portable(self):
        """The files in notebooks/ carry their outputs (scripts/run-notebooks
        writes them), and nothing in them names this machine: no absolute
        path, no broker address."""
        for p in sorted(glob.glob(os.path.join(NOTEBOOKS, "*.ipynb"))):
            with self.subTest(notebook=os.path.basename(p)):
                nb = nbformat.read(p, as_version=4)
                for c in nb.cells:
                    if c.cell_type == "code":
                        self.assertTrue(outputs(c), f"saved without output: {c.source!r}")
                        self.assertIsNotNone(c.execution_count, c.source)
                        self.assertEqual(reader_problems(c), [], c.source)
                with open(p) as f:
                    raw = f.read()
                for bad in (ROOT, "127.0.0.1", "/tmp/", "localhost:"):
                    self.assertNotIn(bad, raw)


def chromium():
    for name in ("chromium", "chromium-headless-shell"):
        path = shutil.which(name)
        if path:
            return path
    return None


class ScreenshotTests(unittest.TestCase):
    """The parquet walkthrough, executed by nbclient, exported to HTML by
    nbconvert and rendered by headless Chromium (Debian's chromium, which
    scripts/test-all installs) shows its result tables."""

    def screenshot(self, browser, html, png):
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1280,2400", "--screenshot=" + png, "file://" + html],
                       check=True, capture_output=True, timeout=180)
        from PIL import Image  # Debian's python3-pil
        return Image.open(png).convert("RGB")

    def test_exported_notebook_renders_its_tables(self):
        browser = chromium()
        if browser is None:
            self.skipTest("SKIPPED: no chromium binary on PATH (Debian package chromium; scripts/test-all installs it)")
        from nbconvert import HTMLExporter  # Debian's python3-nbconvert
        nb = NotebookTests.run_notebook("parquet_walkthrough.ipynb")
        body, _ = HTMLExporter().from_notebook_node(nb)
        self.assertIn('class="clink-result"', body)
        with tempfile.TemporaryDirectory() as d:
            page = os.path.join(d, "walkthrough.html")
            with open(page, "w") as f:
                f.write(body)
            # The same page with the result tables hidden: what the tables
            # draw is the difference between the two screenshots.
            hidden = os.path.join(d, "hidden.html")
            with open(hidden, "w") as f:
                f.write(body.replace("</head>", "<style>table.clink-result{visibility:hidden}</style></head>", 1))
            shot = self.screenshot(browser, page, os.path.join(d, "walkthrough.png"))
            bare = self.screenshot(browser, hidden, os.path.join(d, "hidden.png"))
        w, hgt = shot.size
        self.assertEqual((w, hgt), (1280, 2400))
        px = list(shot.getdata())
        inked = sum(1 for p in px if min(p) < 200)
        self.assertGreater(inked / len(px), 0.01, "the screenshot is (nearly) blank")
        differ = sum(1 for a, b in zip(px, bare.getdata()) if a != b)
        # Five result tables of a few rows each: tens of thousands of pixels.
        print(f"screenshot: {inked / len(px):.3f} inked, {differ} pixels drawn by the tables")
        self.assertGreater(differ, 10000, "the result tables draw nothing")


if __name__ == "__main__":
    unittest.main()
