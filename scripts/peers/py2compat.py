#!/usr/bin/python3
"""Run a Python 2.7 program (Tiresias' simulator) under Debian's Python 3 with Python 2.7's
semantics where the two differ and the program relies on it.  No file of the peer is edited:
this runner reads the peer's sources, changes how they are *executed*, and runs them.

Usage: py2compat.py [--py3-division] [--queue-limit A,B,C] SIMULATOR_DIR SCRIPT.py [ARGS...]
   (run from SIMULATOR_DIR: the peer opens files such as yarn-gput1000.csv relative to the cwd)

What it emulates, and why (docs/peers.md, "Running Tiresias under Python 3", has the details):
  * sys.maxint: the peer uses it as "infinity" (times, ranks).  Python 2.7 on 64-bit Linux has
    sys.maxint == 2**63 - 1 == Python 3's sys.maxsize.
  * classic division: in a module of the peer that lacks `from __future__ import division`
    (run_sim.py, util.py, lp.py), `a / b` with two integers is floor division in Python 2.7.
    Each `/` (and `/=`) there is rewritten at load time into _py2_div(a, b), which floors when
    both operands are integers and divides truly otherwise.  Modules that import
    `division` from __future__ are left alone.
  * round(): Python 2.7 rounds halves away from zero and returns a float; Python 3 rounds
    halves to even and returns an int without ndigits.  Every module of the peer sees
    _py2_round instead of the builtin.
Nothing else is changed.  --py3-division turns the division rewrite off (to measure what it
changes); the fixtures are made without it.

--queue-limit A,B,C sets jobs.JOBS.queue_limit (the 2D-LAS queue thresholds, in GPU-seconds for
dlas-gpu) before the simulation starts, in place of the [3250, 7200, 18000] that jobs.py
hard-codes in _TFJobs.__init__.  Tiresias' simulator/README.md says to change them by editing
jobs.py; this does the same without editing the peer's file.  Only the runs named "...-ql..."
in the fixtures use it.
"""
import ast
import decimal
import importlib.abc
import importlib.util
import numbers
import os
import sys


def _py2_div(a, b):
    if isinstance(a, numbers.Integral) and isinstance(b, numbers.Integral):
        return a // b
    return a / b


def _py2_round(x, ndigits=0):
    # Python 2.7: round half away from zero, on the exact binary value; always a float.
    d = decimal.Decimal(x)
    q = decimal.Decimal(1).scaleb(-ndigits)
    return float(d.quantize(q, rounding=decimal.ROUND_HALF_UP))


class _DivRewriter(ast.NodeTransformer):
    count = 0

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Div):
            _DivRewriter.count += 1
            return ast.copy_location(ast.Call(func=ast.Name(id="_py2_div", ctx=ast.Load()),
                                              args=[node.left, node.right], keywords=[]), node)
        return node

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Div):
            if not isinstance(node.target, ast.Name):
                raise SystemExit("py2compat: '/=' on a non-name target is not handled")
            _DivRewriter.count += 1
            value = ast.Call(func=ast.Name(id="_py2_div", ctx=ast.Load()),
                             args=[ast.Name(id=node.target.id, ctx=ast.Load()), node.value],
                             keywords=[])
            return ast.copy_location(ast.Assign(targets=[node.target], value=value), node)
        return node


def _has_future_division(tree):
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            if any(a.name == "division" for a in stmt.names):
                return True
    return False


PY3_DIVISION = False


def compile_peer(path):
    src = open(path, encoding="utf-8").read()
    tree = ast.parse(src, filename=path)
    if not PY3_DIVISION and not _has_future_division(tree):
        tree = _DivRewriter().visit(tree)
        ast.fix_missing_locations(tree)
    return compile(tree, path, "exec")


def prime_namespace(ns):
    ns["_py2_div"] = _py2_div
    ns["round"] = _py2_round


class _PeerLoader(importlib.abc.Loader):
    def __init__(self, path):
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        prime_namespace(module.__dict__)
        exec(compile_peer(self.path), module.__dict__)


class _PeerFinder(importlib.abc.MetaPathFinder):
    def __init__(self, folder):
        self.folder = folder

    def find_spec(self, name, path, target=None):
        if "." in name:
            return None
        p = os.path.join(self.folder, name + ".py")
        if os.path.isfile(p):
            return importlib.util.spec_from_file_location(name, p, loader=_PeerLoader(p))
        return None


def main():
    global PY3_DIVISION
    args = sys.argv[1:]
    queue_limit = None
    while args and args[0].startswith("--"):
        if args[0] == "--py3-division":
            PY3_DIVISION = True
            args = args[1:]
        elif args[0] == "--queue-limit" and len(args) > 1:
            queue_limit = [int(x) for x in args[1].split(",")]
            args = args[2:]
        else:
            raise SystemExit("py2compat: unknown option %s" % args[0])
    if len(args) < 2:
        raise SystemExit(__doc__)
    folder, script = os.path.abspath(args[0]), args[1]
    sys.maxint = sys.maxsize  # Python 2.7 on LP64: 9223372036854775807
    sys.meta_path.insert(0, _PeerFinder(folder))
    sys.path.insert(0, folder)
    script_path = os.path.join(folder, script)
    sys.argv = [script_path] + args[2:]
    if queue_limit is not None:
        import jobs  # the peer's jobs.py, through _PeerFinder; run_sim.py gets the same module
        jobs.JOBS.queue_limit = queue_limit
    ns = {"__name__": "__main__", "__file__": script_path, "__builtins__": __builtins__}
    prime_namespace(ns)
    exec(compile_peer(script_path), ns)


if __name__ == "__main__":
    main()
