"""Policies written in Python (salus.Policy): SRTF and FAIR in Python (salus.policies) give the
built-ins' results exactly, on one GPU and on a cluster with gang jobs; a policy that raises stops
the run with its traceback; a wrong answer is refused with the policy's name."""
import os
import tempfile
import traceback
import unittest

import pandas as pd

import salus
from helpers import SalusTest, frame_of, generate
from salus.policies import Fair, Pack, Srtf


class PolicyTest(SalusTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        # Gang jobs of 2 and 4 GPUs among 1-GPU ones, arriving faster than 4 GPUs serve them.
        cls.cluster_trace = os.path.join(cls.tmp.name, "gangs.csv")
        generate(cls.cluster_trace, "--jobs", "120", "--seed", "3", "--mean-interarrival-s", "20",
                 "--gang-sizes", "1:0.8,2:0.15,4:0.05")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assert_same_runs(self, r, builtin, python):
        a, b = frame_of(r, builtin), frame_of(r, python)
        self.assertGreater(len(a), 0)
        pd.testing.assert_frame_equal(a, b)
        ra = next(x for x in r.summary["results"] if x["policy"] == builtin)
        rb = next(x for x in r.summary["results"] if x["policy"] == python)
        ra, rb = dict(ra), dict(rb)
        del ra["policy"], rb["policy"]
        self.assertEqual(ra, rb)  # every number: metrics, switches, lanes, admissions, cluster

    def test_python_srtf_and_fair_match_the_builtins_on_the_shipped_trace(self):
        r = salus.simulate(policy=["srtf", Srtf(), "fair", Fair()], quiet=True)
        self.assert_same_runs(r, "srtf", "srtf_py")
        self.assert_same_runs(r, "fair", "fair_py")
        # The two policies differ from each other: the comparison can fail.
        self.assertFalse(frame_of(r, "srtf").equals(frame_of(r, "fair")))

    def test_python_pack_matches_the_builtin(self):
        for gpus in (1, 4):
            r = salus.simulate(policy=["pack", Pack()], gpus=gpus, gpu_mem="8GiB", placement="util-pack", quiet=True)
            self.assert_same_runs(r, "pack", "pack_py")
            self.assertGreater(r.summary["results"][0]["max_concurrent_lanes"], 1)

    def test_python_srtf_and_fair_match_the_builtins_in_auto_lanes(self):
        r = salus.simulate(policy=["srtf", Srtf(), "fair", Fair()], lanes="auto", gpu_mem="8GiB", quiet=True)
        self.assert_same_runs(r, "srtf", "srtf_py")
        self.assert_same_runs(r, "fair", "fair_py")

    def test_python_srtf_and_fair_match_the_builtins_on_a_cluster(self):
        for trace in (None, self.cluster_trace):
            with self.subTest(trace=trace):
                r = salus.simulate(trace=trace, policy=["srtf", Srtf(), "fair", Fair()], gpus=4, quiet=True)
                self.assert_same_runs(r, "srtf", "srtf_py")
                self.assert_same_runs(r, "fair", "fair_py")
                sizes = {row["gpus"] for row in r.summary["results"][0]["cluster"]["jct_by_size"]}
                if trace is not None:
                    self.assertEqual(sizes, {1, 2, 4})

    def test_a_policy_that_raises_stops_the_run_with_its_traceback(self):
        class Breaks(salus.Policy):
            def choose(self, view, lane):
                if view.now > 0:
                    raise KeyError("no such lane state")
                return lane.jobs[0]

        try:
            salus.simulate(policy=Breaks(), quiet=True)
            self.fail("the run did not stop")
        except KeyError as e:  # (assertRaises drops the traceback)
            self.assertEqual(e.args, ("no such lane state",))
            frames = traceback.extract_tb(e.__traceback__)
        self.assertEqual(frames[-1].name, "choose")
        self.assertEqual(frames[-1].filename, __file__)
        self.assertIn("raise KeyError", frames[-1].line)

    def test_wrong_answers_are_refused(self):
        class NotInLane(salus.Policy):
            name = "not_in_lane"

            def choose(self, view, lane):
                return len(view) + 3

        with self.assertRaises(ValueError) as caught:
            salus.simulate(policy=NotInLane(), quiet=True)
        self.assertIn("policy 'not_in_lane': choose returned job 103", str(caught.exception))

        class Shadows(salus.Policy):
            name = "fifo"

            def choose(self, view, lane):
                return lane.jobs[0]

        with self.assertRaises(ValueError) as caught:
            salus.simulate(policy=Shadows(), quiet=True)
        self.assertIn("'fifo' is a built-in policy's", str(caught.exception))

        class NoChoose(salus.Policy):
            pass

        with self.assertRaises(TypeError):
            salus.simulate(policy=NoChoose(), quiet=True)

    def test_a_view_kept_past_its_call_refuses_to_read(self):
        kept = []

        class Keeps(salus.Policy):
            def choose(self, view, lane):
                kept.append(view)
                return lane.jobs[0], view.remaining_iterations(lane.jobs[0])

        salus.simulate(trace=os.path.join(os.environ.get("SALUS_SOURCE_DIR", "."), "traces", "examples", "small.csv"),
                       policy=Keeps(), quiet=True)
        self.assertTrue(kept)
        with self.assertRaises(ValueError):
            kept[0].now

    def test_the_instance_is_the_first_gpus_and_hooks_are_called(self):
        class Counts(salus.Policy):
            def begin(self, jobs):
                self.jobs = jobs
                self.finished = 0

            def on_finish(self, view, job, lane_id):
                self.finished += 1

            def choose(self, view, lane):
                return lane.jobs[0], view.remaining_iterations(lane.jobs[0])

        p = Counts()
        r = salus.simulate(policy=p, quiet=True)
        self.assertEqual(p.jobs, 100)
        self.assertEqual(p.finished, r.summary["results"][0]["jobs_done"])


if __name__ == "__main__":
    unittest.main()
