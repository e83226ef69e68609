"""The examples of docs/python.md run as printed: each ```python block, written to a script and run
by this interpreter from the source tree (the module from PYTHONPATH), prints exactly the ``` block
that follows it (trailing spaces aside). A block that needs dask (salus.sweep, salus.gpus_needed) is skipped where
python3-distributed is missing.

    docs_examples_test.py SOURCE_DIR [--print]     (--print: show what each block prints)
"""
import os
import re
import subprocess
import sys
import tempfile

source = sys.argv[1]
show = "--print" in sys.argv[2:]
with open(os.path.join(source, "docs", "python.md"), encoding="utf-8") as f:
    text = f.read()
blocks = re.findall(r"^```(\w*)\n(.*?)^```\n", text, re.M | re.S)
pairs = []
for i, (lang, body) in enumerate(blocks):
    if lang == "python":
        if i + 1 >= len(blocks) or blocks[i + 1][0] != "":
            sys.exit("docs/python.md: python block %d has no output block after it" % len(pairs))
        pairs.append((body, blocks[i + 1][1]))
if len(pairs) < 5:
    sys.exit("docs/python.md: %d python blocks with their output, expected at least 5" % len(pairs))
try:
    import dask.distributed  # noqa: F401
    have_dask = True
except ImportError:
    have_dask = False
failed = 0
with tempfile.TemporaryDirectory() as tmp:
    for n, (code, expected) in enumerate(pairs):
        if ("salus.sweep" in code or "salus.gpus_needed" in code) and not have_dask:
            print("example %d: skipped (no python3-distributed)" % n)
            continue
        script = os.path.join(tmp, "example_%d.py" % n)
        with open(script, "w", encoding="utf-8") as f:
            f.write(code)
        p = subprocess.run([sys.executable, script], cwd=source, capture_output=True, text=True, timeout=300)
        got = [line.rstrip() for line in p.stdout.rstrip("\n").split("\n")]
        want = [line.rstrip() for line in expected.rstrip("\n").split("\n")]
        if show:
            print("example %d prints:\n%s" % (n, "\n".join(got)))
        if p.returncode != 0 or got != want:
            failed += 1
            print("example %d: FAILED (exit %d)\n--- expected\n%s\n--- got\n%s\n--- stderr\n%s"
                  % (n, p.returncode, "\n".join(want), "\n".join(got), p.stderr[-2000:]))
        else:
            print("example %d: ok (%d lines)" % (n, len(got)))
sys.exit(1 if failed else 0)
