"""salus.sweep on a real Dask cluster: a `dask scheduler` and two `dask worker` processes on
127.0.0.1 (no nanny, so a killed worker stays dead), a grid of runs, one worker killed while it
holds a run; every point's result arrives once and equals the run made here directly."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import salus
from helpers import SalusTest, generate

try:
    from dask.distributed import Client
except ImportError:  # python3-distributed not installed
    Client = None


def dask_command():
    for c in (["dask", "scheduler"], ["dask-scheduler"]):
        if shutil.which(c[0]):
            return c[0]
    return None


@unittest.skipIf(Client is None or dask_command() is None, "python3-distributed is not installed")
class SweepTest(SalusTest):
    def setUp(self):
        super().setUp()
        self.tmp = tempfile.TemporaryDirectory()
        self.procs = []
        self.logs = []

    def tearDown(self):
        for log in self.logs:
            log.close()
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.tmp.cleanup()

    def start(self, *args):
        log = open(os.path.join(self.tmp.name, "log-%d.txt" % len(self.procs)), "w")
        self.logs.append(log)
        p = subprocess.Popen(["dask"] + list(args), stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
        self.procs.append(p)
        return p

    def test_grid_on_two_workers_one_killed_mid_grid(self):
        trace = os.path.join(self.tmp.name, "t.csv")
        generate(trace, "--jobs", "1500", "--seed", "5", "--mean-interarrival-s", "30")
        grid = {"trace": trace, "policy": "fifo,srtf,fair", "gpus": [1, 2, 3, 4], "seed": [1, 2, 3], "profile_noise": 5}
        points = salus.sweep.__globals__["grid_points"](grid)
        self.assertEqual(len(points), 12)

        scheduler_file = os.path.join(self.tmp.name, "scheduler.json")
        self.start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                   "--scheduler-file", scheduler_file)
        workers = {}
        for name in ("w1", "w2"):
            workers[name] = self.start("worker", "--scheduler-file", scheduler_file, "--name", name, "--nthreads", "1",
                                       "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                                       "--local-directory", self.tmp.name)
        deadline = time.time() + 60
        while not os.path.exists(scheduler_file) and time.time() < deadline:
            time.sleep(0.1)
        with Client(scheduler_file=scheduler_file, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
            by_name = {info["name"]: addr for addr, info in client.scheduler_info()["workers"].items()}
            killed = {}

            # Kill w1 once it is running a run of the grid.
            import threading

            def killer():
                while time.time() < deadline + 120:
                    held = client.processing().get(by_name["w1"], ())
                    if any("run_point" in str(k) for k in held):
                        killed["held"] = len(held)
                        os.kill(workers["w1"].pid, signal.SIGKILL)
                        return
                    time.sleep(0.02)

            t = threading.Thread(target=killer)
            t.start()
            frame = salus.sweep(grid, client=client)
            t.join()
            self.assertIn("held", killed, "w1 was never seen running a run")
            self.assertIsNotNone(workers["w1"].poll())
            self.assertEqual(list(client.scheduler_info()["workers"]), [by_name["w2"]])

        # Every point once, a row per policy, in grid order.
        self.assertEqual(list(frame["point"]), [i for i in range(12) for _ in range(3)])
        self.assertEqual(list(frame["policy"]), ["fifo", "srtf", "fair"] * 12)
        self.assertEqual(list(frame["gpus"]), [g for g in (1, 2, 3, 4) for _ in range(3) for _ in range(3)])
        # Each equals the run made here.
        for i, p in enumerate(points):
            direct = salus.simulate(quiet=True, **p).metrics
            got = frame[frame.point == i].reset_index(drop=True)
            for col in ("makespan_s", "avg_jct_s", "p95_jct_s", "jobs_done"):
                self.assertEqual(list(got[col]), list(direct[col]), "point %d, %s" % (i, col))

    def test_local_cluster_and_errors(self):
        small = os.path.join(os.environ.get("SALUS_SOURCE_DIR", "."), "traces", "examples", "small.csv")
        frame = salus.sweep([{"trace": small, "policy": "pack"}, {"trace": small, "policy": "pack", "gpu_mem": "8GiB"}],
                            n_workers=1)
        self.assertEqual(list(frame["point"]), [0, 1])
        self.assertNotEqual(frame["makespan_s"][0], frame["makespan_s"][1])
        with self.assertRaises(salus.InputError):
            salus.sweep([{"trace": small, "policy": "nosuch"}], n_workers=1)

    def test_gpus_needed_equals_salus_experiment(self):
        # The shipped trace and a bound of 7.9 min: every cluster size from 1 to 9 for each of the
        # five configurations spread over a local cluster, against salus-experiment gpus_needed's
        # answers (its table: configuration, policy, lanes, placement, GPUs needed, avg JCT).
        trace = os.path.join(os.environ.get("SALUS_SOURCE_DIR", "."), "traces", "long_trace_100.csv")
        answer = salus.gpus_needed(trace, bound_jct_s=7.9 * 60, max_gpus=9, n_workers=2)
        experiment = os.path.join(os.path.dirname(os.environ["SALUS_SIM_BIN"]), "salus-experiment")
        out = subprocess.run([experiment, "gpus_needed", "--trace", trace, "--bound-jct-min", "7.9", "--quiet",
                              "--out", self.tmp.name], capture_output=True, text=True, check=True).stdout
        expected = {}
        for name in ("exclusive FIFO", "exclusive SRTF", "Salus PACK", "Salus SRTF", "Salus FAIR"):
            line = next(l for l in out.splitlines() if l.strip().startswith(name + " "))
            cells = line.split()
            at = cells.index("min") if "min" in cells else None
            gpus = cells[len(name.split()) + 3]
            expected[name] = (int(gpus), float(cells[at - 1]) if at else None)
        self.assertEqual(len(expected), 5)
        for row in answer.to_dict("records"):
            gpus, jct_min = expected[row["configuration"]]
            self.assertEqual(row["gpus_needed"], gpus, row["configuration"])
            self.assertAlmostEqual(row["avg_jct_s"] / 60, jct_min, delta=0.05, msg=row["configuration"])
        curve = answer.attrs["curve"]
        self.assertEqual(len(curve), 5 * 9)
        # Exact: at every configuration's answer, every smaller N was run and misses.
        for row in answer.to_dict("records"):
            below = curve[(curve.configuration == row["configuration"]) & (curve.gpus < row["gpus_needed"])]
            self.assertEqual(len(below), row["gpus_needed"] - 1)
            self.assertFalse(below.meets.any())
        with self.assertRaises(ValueError):
            salus.gpus_needed(trace, bound_jct_s=60, max_gpus=0)


if __name__ == "__main__":
    unittest.main()
