#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of tools/bench/report (make check-tools): no VM needed.

    python3 tools/bench/report_test.py [-v]
"""

import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "report")
sys.path.insert(0, HERE)
_loader = importlib.machinery.SourceFileLoader("report", REPORT)
_spec = importlib.util.spec_from_loader("report", _loader)
report = importlib.util.module_from_spec(_spec)
_loader.exec_module(report)


def runs(*rows):
    """JSON lines, one per (metric, impl, unit, value)."""
    return "".join(json.dumps({"metric": m, "impl": i, "unit": u, "value": v}) + "\n"
                   for m, i, u, v in rows)


class PairedTest(unittest.TestCase):
    def test_ratios(self):
        self.assertEqual(report.paired([2, 6], [1, 2], "a", "b"), ([2, 3], None))

    def test_zero_on_either_side_is_no_ratio(self):
        per, why = report.paired([54, 71, 7], [1, 0, 0], "system_wq", "kgo")
        self.assertIsNone(per)
        self.assertIn("kgo's figure is 0 in 2 of 3 runs", why)
        per, why = report.paired([0], [5], "a", "b")
        self.assertIsNone(per)
        self.assertIn("a's figure is 0", why)


class ReportTest(unittest.TestCase):
    """The report run as bench.sh runs it, on a small runs.jsonl."""

    def run_report(self, text):
        with tempfile.TemporaryDirectory(prefix="kgo-report-test.") as d:
            path = os.path.join(d, "runs.jsonl")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            out = subprocess.run([sys.executable, REPORT, "-o", d, path], check=True,
                                 capture_output=True, text=True).stdout
            with open(os.path.join(d, "results.json"), encoding="utf-8") as f:
                return out, {m["metric"]: m for m in json.load(f)["metrics"]}

    def test_kgo_zero_in_most_runs(self):
        # blk_sleep_n10000_threads of a full run: kgo added a thread in
        # one run of five; that run's 54x is not the row's speed-up.
        text = runs(*[("blk_threads", "kgo", "threads", k) for k in (1, 0, 0, 0, 0)],
                    *[("blk_threads", "system_wq", "threads", v) for v in (54, 71, 7, 46, 2)],
                    ("spawn", "kgo", "ns/op", 10), ("spawn", "go", "ns/op", 20))
        out, metrics = self.run_report(text)
        m = metrics["blk_threads"]
        self.assertEqual(m["speedup"], {})
        self.assertIn("kgo's figure is 0 in 4 of 5 runs", m["no_speedup"]["system_wq"])
        line = next(ln for ln in out.splitlines() if ln.startswith("blk_threads"))
        self.assertTrue(line.rstrip().endswith(" -"), line)
        self.assertNotIn("54", line.split("system_wq")[1])
        self.assertIn("note: blk_threads system_wq: no speed-up:", out)
        self.assertAlmostEqual(metrics["spawn"]["speedup"]["go"]["median"], 2.0)

    def test_derived_with_zero_is_not_derived(self):
        out, metrics = self.run_report(runs(("tree_1p", "kgo", "ms", 100),
                                            ("tree_allp", "kgo", "ms", 0)))
        self.assertNotIn("tree_parallel_speedup", metrics)
        self.assertIn("tree_parallel_speedup: not derived: tree_allp's figure is 0", out)


def cases(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from cases(t)
        else:
            yield t


def main():
    """TAP, a line a case, as make check counts the host's tests."""
    verbose = "-v" in sys.argv[1:]
    tests = list(cases(unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])))
    print(f"1..{len(tests)}")
    failed = 0
    for n, t in enumerate(tests, 1):
        r = unittest.TestResult()
        t.run(r)
        for _, tb in r.failures + r.errors:
            for line in tb.rstrip().splitlines():
                print("# " + line)
        ok = r.wasSuccessful()
        failed += not ok
        if verbose or not ok:
            print(f"# {t.id()}")
        print(f"{'ok' if ok else 'not ok'} {n} report_test {t.id().split('.', 1)[1]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
