"""salus.simulate against salus-sim: the same summary bytes, table and per-job rows for the same
options; the options and defaults of the program's table; traces from DataFrames; errors with the
program's messages."""
import os
import re
import tempfile
import unittest

import pandas as pd

import salus
from helpers import SalusTest, frame_of, run_sim, sim_summary, source

SMALL = source("traces", "examples", "small.csv")
TIRESIAS = source("tests", "data", "traces", "import", "tiresias_60_job_head.csv")

# The same runs written as salus-sim's command line and as simulate's keywords.
CASES = [
    ([], {}),
    (["--trace", SMALL, "--policy", "fifo,pack", "--gpu-mem", "8GiB", "--interference", "none",
      "--switch-cost-ms", "0", "--lanes", "auto"],
     dict(trace=SMALL, policy=["fifo", "pack"], gpu_mem="8GiB", interference="none", switch_cost_ms=0, lanes="auto")),
    (["--trace", TIRESIAS, "--policy", "fifo,srtf,pack"], dict(trace=TIRESIAS, policy="fifo,srtf,pack")),
    (["--gpus", "4", "--policy", "fifo,pack,fair"], dict(gpus=4, policy=["fifo", "pack", "fair"])),
    (["--policy", "srtf,priority", "--gpu-mem", "6GiB", "--paging", "on", "--profile-noise", "5", "--seed", "7",
      "--time-scale", "10"],
     dict(policy=["srtf", "priority"], gpu_mem="6GiB", paging=True, profile_noise=5, seed=7, time_scale=10)),
]


class SimulateTest(SalusTest):
    def test_summary_bytes_and_table_match_salus_sim(self):
        for args, kwargs in CASES:
            with self.subTest(args=" ".join(args)):
                expected, stdout = sim_summary(args)
                r = salus.simulate(quiet=True, **kwargs)
                self.assertEqual(r.summary_json, expected)
                self.assertEqual(stdout.splitlines()[0], r.header)
                self.assertIn(r.table, stdout)
                for note in r.notes:
                    self.assertIn("note: " + note, stdout)
                self.assertEqual([x["policy"] for x in r.summary["results"]], list(r.metrics["policy"]))

    def test_options_and_defaults_are_the_option_tables(self):
        status, help_text, _ = run_sim(["--help"])
        self.assertEqual(status, 0)
        listed = set(re.findall(r"^\s+(?:-h \[ )?--([a-z0-9-]+)", help_text, re.M)) - {"help", "version"}
        names = {o["option"][2:] for o in salus.options()}
        self.assertEqual(names, listed)
        with_default = [o for o in salus.options() if o["default"] is not None]
        self.assertGreater(len(with_default), 15)
        for o in with_default:
            self.assertIn("%s %s (=%s)" % (o["option"], o["value_name"], o["default"]), help_text)
        by_name = {o["name"]: o for o in salus.options()}
        self.assertEqual(by_name["gpu_mem"]["default"], "16GiB")
        self.assertTrue(by_name["quiet"]["switch"])

    def test_frames_hold_the_cli_numbers(self):
        with tempfile.TemporaryDirectory() as tmp:
            status, _, err = run_sim(["--trace", SMALL, "--policy", "fifo,fair", "--out", tmp, "--quiet"])
            self.assertEqual(status, 0, err)
            r = salus.simulate(trace=SMALL, policy=["fifo", "fair"], quiet=True)
            for policy in ("fifo", "fair"):
                csv = pd.read_csv(os.path.join(tmp, policy + "_jobs.csv"), keep_default_na=False,
                                  na_values={"start_s": [""], "finish_s": [""], "jct_s": [""], "queuing_s": [""]})
                got = frame_of(r, policy)
                self.assertEqual(list(got.columns), list(csv.columns))
                pd.testing.assert_frame_equal(got, csv, check_dtype=False)
        for row, result in zip(r.metrics.to_dict("records"), r.summary["results"]):
            for key in ("makespan_s", "avg_jct_s", "avg_queuing_s", "p95_jct_s", "jobs_done", "lane_mode"):
                self.assertEqual(row[key], result[key])

    def test_trace_from_a_dataframe(self):
        frame = pd.read_csv(SMALL, comment="#")
        from_file = salus.simulate(trace=SMALL, policy=["pack", "srtf"], quiet=True)
        from_frame = salus.simulate(trace=frame, policy=["pack", "srtf"], quiet=True)
        self.assertEqual(from_frame.summary["trace"], "<DataFrame>")
        pd.testing.assert_frame_equal(from_frame.jobs, from_file.jobs)
        self.assertEqual(from_frame.summary["results"], from_file.summary["results"])
        # A frame with explicit figures: a short job behind a long one under FIFO waits for it.
        hand = pd.DataFrame({"job_id": ["a", "b"], "arrival_s": [0, 1], "iterations": [100, 10],
                             "persistent_mib": [1000, 1000], "ephemeral_mib": [2000, 2000], "iter_ms": [100, 100]})
        r = salus.simulate(trace=hand, policy="fifo", interference="none", switch_cost_ms=0, quiet=True)
        self.assertEqual(list(r.jobs["finish_s"]), [10.0, 11.0])

    def test_errors_carry_salus_sim_messages(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.csv")
            with open(bad, "w") as f:
                f.write("job_id,arrival_s,workload,iterations\nj1,0,resnet50_25,10\nj2,1,resnet50_25,-5\n")
            cases = [
                (["--trace", bad], dict(trace=bad)),
                (["--policy", "fifo,srtff"], dict(policy=["fifo", "srtff"])),
                (["--polcy", "fifo"], dict(polcy="fifo")),
                (["--gpu-mem", "16"], dict(gpu_mem=16)),
                (["--gpus", "2", "--cluster", bad], dict(gpus=2, cluster=bad)),
            ]
            for args, kwargs in cases:
                with self.subTest(args=" ".join(args)):
                    status, _, err = run_sim(args + ["--quiet"])
                    self.assertEqual(status, 2)
                    prefix = "salus-sim: "
                    self.assertTrue(err.startswith(prefix), err)
                    with self.assertRaises(salus.InputError) as caught:
                        salus.simulate(quiet=True, **kwargs)
                    self.assertEqual(str(caught.exception), err[len(prefix):].rstrip("\n"))
            with self.assertRaises(salus.InputError) as caught:
                salus.simulate(trace=bad, quiet=True)
            self.assertTrue(str(caught.exception).startswith(bad + ":3: "), str(caught.exception))
        # A DataFrame's row r is line r + 2 of the file it stands for.
        frame = pd.DataFrame({"job_id": ["a", "b"], "arrival_s": [0, 1], "workload": ["resnet50_25", "nosuch_1"],
                              "iterations": [10, 10]})
        with self.assertRaises(salus.InputError) as caught:
            salus.simulate(trace=frame, quiet=True)
        self.assertTrue(str(caught.exception).startswith("<DataFrame>:3: "), str(caught.exception))
        self.assertTrue(issubclass(salus.InputError, ValueError))
        with self.assertRaises(TypeError):
            salus.simulate(help=True)


if __name__ == "__main__":
    unittest.main()
