#!/usr/bin/python3
"""Self-test of the cvxpy stand-in in scripts/peers/gavel_lp/cvxpy on tiny LPs solved by hand.

    /usr/bin/python3 scripts/peers/gavel_lp/selftest.py      # prints 'N passed, 0 failed'

Each LP is written exactly as Gavel's policies/max_min_fairness.py and policies/policy.py write
theirs, and solved with every GAVEL_LP_METHOD.  Exit status 1 on any failure.
"""
import importlib.util
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cvxpy as cp  # noqa: E402  (the stand-in, not the real cvxpy)

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s %s" % (name, detail))


def gavel_lp(coef, scale, num_workers):
    """policies/max_min_fairness.py MaxMinFairnessPolicyWithPerf.get_allocation's LP with
    coef = throughputs * priority_weights * scale_factors_array (already multiplied) and
    policies/policy.py get_base_constraints."""
    x = cp.Variable(coef.shape)
    objective = cp.Maximize(cp.min(cp.sum(cp.multiply(coef, x), axis=1)))
    constraints = [x >= 0,
                   cp.sum(cp.multiply(scale, x), axis=0) <= list(num_workers),
                   cp.sum(x, axis=1) <= 1]
    prob = cp.Problem(objective, constraints)
    value = prob.solve(solver="ECOS")
    return prob, x, value


def feasible(x, scale, num_workers, tol=1e-6):
    return (np.all(x >= -tol) and np.all((scale * x).sum(axis=0) <= np.array(num_workers) + tol)
            and np.all(x.sum(axis=1) <= 1 + tol))


def run(m):
    os.environ["GAVEL_LP_METHOD"] = m
    tag = "[%s]" % m

    # 1. Two 1-GPU jobs, one worker type with 1 GPU, equal throughputs: by hand, x = (1/2, 1/2),
    #    t = 1/2, and it is the only optimum.
    coef = np.array([[1.0], [1.0]])
    scale = np.ones((2, 1))
    prob, x, t = gavel_lp(coef, scale, [1])
    check("halves" + tag, prob.status == "optimal" and abs(t - 0.5) < 1e-6
          and np.allclose(x.value, [[0.5], [0.5]], atol=1e-6), (prob.status, t, x.value))

    # 2. A 2-GPU job (scale 2) and a 1-GPU job on 2 GPUs, throughput 1 each; objective rows are
    #    2*x0 and x1 (scale_factors_array multiplies the throughputs); 2*x0 + x1 <= 2.
    #    max min(2 x0, x1): 2 x0 = x1 = t, 2t <= 2 -> t = 1, x0 = 1/2, x1 = 1 (unique).
    coef = np.array([[2.0], [1.0]])
    scale = np.array([[2.0], [1.0]])
    prob, x, t = gavel_lp(coef, scale, [2])
    check("gang" + tag, abs(t - 1.0) < 1e-6 and np.allclose(x.value, [[0.5], [1.0]], atol=1e-6),
          (t, x.value))

    # 3. Spare GPUs: two 1-GPU jobs on 4 GPUs, equal throughputs: each job at most 1 (row sums
    #    <= 1): x = (1, 1), t = 1, unique (the column constraint is slack).
    prob, x, t = gavel_lp(np.array([[1.0], [1.0]]), np.ones((2, 1)), [4])
    check("spare" + tag, abs(t - 1.0) < 1e-6 and np.allclose(x.value, [[1.0], [1.0]], atol=1e-6),
          (t, x.value))
    # 3b. The same with throughputs 3 and 5: t = min(3 x0, 5 x1) <= 3, so t = 3, x0 = 1, and
    #    any x1 in [3/5, 1] is optimal: the faster job's share of the spare GPUs is free.
    prob, x, t = gavel_lp(np.array([[3.0], [5.0]]), np.ones((2, 1)), [4])
    v = x.value.reshape(-1)
    check("spare-face" + tag, abs(t - 3.0) < 1e-6 and abs(v[0] - 1) < 1e-6
          and 0.6 - 1e-6 <= v[1] <= 1 + 1e-6, (t, v))
    if m == "ipx":
        check("spare-interior" + tag, 0.6 + 1e-4 < v[1] < 1 - 1e-4, v)
    spare = v[1]

    # 4. Not unique: two 1-GPU jobs, two worker types of 1 GPU each (columns v100, k80).
    #    Job 0 runs 2/s on v100 and 1/s on k80, job 1 runs 1/s on both.
    #    max min(2a + b, c + d), a + c <= 1, b + d <= 1, a + b <= 1, c + d <= 1, all >= 0.
    #    Job 1 gets at most c + d <= 1, so t <= 1, and t = 1 whenever c + d = 1 and
    #    2a + b >= 1: (a, b, c, d) = (1/2, 0, 1/2, 1/2), (1, 0, 0, 1), (2/3, 1/3, 1/3, 2/3)...
    coef = np.array([[2.0, 1.0], [1.0, 1.0]])
    scale = np.ones((2, 2))
    prob, x, t = gavel_lp(coef, scale, [1, 1])
    v = x.value
    check("face-t" + tag, abs(t - 1.0) < 1e-6, t)
    check("face-x" + tag, feasible(v, scale, [1, 1]) and abs(v[1].sum() - 1) < 1e-6
          and 2 * v[0, 0] + v[0, 1] >= 1 - 1e-6, v)
    if m == "ipx":
        # Inside the face: not at the vertices the simplex methods return (a = 1/2 or 1).
        check("face-interior" + tag, 0.5 + 1e-4 < v[0, 0] < 1 - 1e-4 and 0 < v[1, 0] < 0.5, v)
    return v, spare


def errors():
    x = cp.Variable((2, 2))
    for name, f in [("add", lambda: x + 1), ("index", lambda: x[0]),
                    ("mul", lambda: x * 2), ("two vars", lambda: cp.multiply(x, x)),
                    ("hstack", lambda: cp.hstack([x])), ("Minimize", lambda: cp.Minimize(1)),
                    ("equality", lambda: x == 0), ("sum axis 2", lambda: cp.sum(x, axis=2)),
                    ("Maximize(x)", lambda: cp.Maximize(x)),
                    ("solver kwargs", lambda: cp.Problem(cp.Maximize(cp.min(cp.sum(x, axis=1))),
                                                         [x <= 1]).solve(solver="SCS",
                                                                         acceleration_lookback=0)),
                    ("two Variables", lambda: cp.Problem(cp.Maximize(cp.min(cp.sum(x, axis=1))),
                                                         [cp.Variable((2, 2)) <= 1]))]:
        try:
            f()
        except NotImplementedError:
            check("raises " + name, True)
        else:
            check("raises " + name, False, "no error")
    # Unbounded: no constraint on x.
    try:
        cp.Problem(cp.Maximize(cp.min(cp.sum(x, axis=1))), [x >= 0]).solve()
    except RuntimeError as e:
        check("unbounded stops", "unbounded" in str(e) or "solver_error" in str(e), str(e))
    else:
        check("unbounded stops", False, "no error")


if __name__ == "__main__":
    methods = list(cp.METHODS)
    if importlib.util.find_spec("cvxopt") is None:   # only the optional method needs it
        methods.remove("cvxopt")
        print("cvxopt is not installed (python3-cvxopt): method cvxopt not tested")
    faces = {m: run(m) for m in methods}
    os.environ["GAVEL_LP_METHOD"] = cp.DEFAULT_METHOD
    errors()
    # The vertex methods and the interior method may return different optima of LP 4.
    print("LP 3b (non-unique), x1 by method: " +
          "; ".join("%s %.4f" % (m, f[1]) for m, f in faces.items()))
    print("LP 4 (non-unique), (a, b, c, d) by method: " +
          "; ".join("%s %s" % (m, np.array2string(f[0].reshape(-1), precision=4, separator=","))
                    for m, f in faces.items()))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
