"""The package as `cmake --install` lays it out: installed into a fresh prefix, imported by this
interpreter from <prefix>/<install dir> with nothing of the build tree on its path and no
SALUS_DATA_DIR, it finds <prefix>/share/salus and runs the shipped trace as salus-sim does.

    installed_test.py CMAKE BUILD_DIR PYTHON_INSTALL_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

cmake, build, install_dir = sys.argv[1:4]
with tempfile.TemporaryDirectory(prefix="salus-install-") as prefix:
    subprocess.run([cmake, "--install", build, "--prefix", prefix], check=True, stdout=subprocess.DEVNULL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SALUS_") and k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.path.join(prefix, install_dir)
    script = ("import json, salus; r = salus.simulate(policy=['fifo', 'pack'], quiet=True); "
              "print(json.dumps([salus.__file__, r.summary['profiles'], r.summary['trace'], r.summary_json]))")
    out = subprocess.run([sys.executable, "-c", script], env=env, cwd="/", check=True, capture_output=True, text=True)
    module, profiles, trace, summary = json.loads(out.stdout)
    real = os.path.realpath(prefix)
    assert os.path.realpath(module).startswith(real + "/"), module
    assert profiles == real + "/share/salus/profiles/catalog.json", profiles
    assert trace == real + "/share/salus/long_trace_100.csv", trace
    # The installed salus-sim, run the same way, writes the same summary.
    path = os.path.join(prefix, "summary.json")
    subprocess.run([os.path.join(prefix, "bin", "salus-sim"), "--policy", "fifo,pack", "--quiet", "--summary-json", path],
                   env=env, cwd="/", check=True, stdout=subprocess.DEVNULL)
    with open(path, encoding="utf-8") as f:
        assert f.read() == summary, "the installed module's summary differs from the installed salus-sim's"
print("installed package: imported from", install_dir, "and ran like salus-sim")
