"""What the Python tests share: where the programs and the source are (ctest passes them in the
environment, tests/python/CMakeLists.txt), and salus-sim run as a program."""
import os
import subprocess
import tempfile
import unittest

SIM = os.environ.get("SALUS_SIM_BIN", "")
TRACE = os.environ.get("SALUS_TRACE_BIN", "")
SOURCE = os.environ.get("SALUS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def source(*parts):
    return os.path.join(SOURCE, *parts)


def run_sim(args):
    """salus-sim with `args`; returns (status, stdout, stderr)."""
    p = subprocess.run([SIM] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def sim_summary(args):
    """The bytes salus-sim writes to --summary-json with `args`, and its stdout."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "summary.json")
        status, out, err = run_sim(list(args) + ["--summary-json", path, "--quiet"])
        if status != 0:
            raise AssertionError("salus-sim %s: exit %d: %s" % (" ".join(args), status, err))
        with open(path, encoding="utf-8") as f:
            return f.read(), out


def generate(path, *args):
    """A trace drawn by salus-trace generate into `path`."""
    subprocess.run([TRACE, "generate", "--out", path] + list(args), check=True, capture_output=True)


def frame_of(result, policy):
    """result.jobs of one policy, without the policy column, indexed from 0."""
    j = result.jobs
    return j[j.policy == policy].drop(columns="policy").reset_index(drop=True)


class SalusTest(unittest.TestCase):
    def setUp(self):
        if not SIM:
            self.skipTest("SALUS_SIM_BIN is not set (run through ctest)")
