#!/usr/bin/python3
"""Self-test of the cvxpy stand-in in scripts/peers/gavel_lp/cvxpy on tiny LPs solved by hand.

    /usr/bin/python3 scripts/peers/gavel_lp/selftest.py      # prints 'N passed, 0 failed'

Each LP is written exactly as Gavel's policies/max_min_fairness.py and policies/policy.py write
theirs, and solved with every GAVEL_LP_METHOD.  GAVEL_LP_METHOD=lexmaxmin is also checked against
an independent water-filling on one worker type (random instances) and, on two types, against
the definition of max-min fairness and the dual simplex's answer.  Exit status 1 on any failure.
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
    if m == "lexmaxmin":
        # Lexicographic: job 1 is held at c + d = 1; then job 0's 2a + b is largest at
        # a = d = 1 (a <= d since a + c <= 1 = c + d; b <= 1 - d), where it is 2: the one
        # answer (1, 0, 0, 1).  In LP 3b, x1 = 1 (row 5 x1 = 5 once 3 x0 = 3 is fixed).
        check("face-lex" + tag, np.allclose(v, [[1.0, 0.0], [0.0, 1.0]], atol=1e-7), v)
        check("spare-lex" + tag, abs(spare - 1.0) < 1e-7, spare)
    return v, spare


def water_fill(c, s, W):
    """Independent of the stand-in: the lexicographic max-min x of the rows c_j x_j subject to
    0 <= x_j <= 1 and sum_j s_j x_j <= W (one worker type; c_j, s_j > 0): x_j = min(1, L / c_j)
    with the level L filling W, or every x_j = 1 when they all fit.  L from the breakpoints c_j
    in increasing order: the jobs with c_j <= L run all the time."""
    c, s = np.asarray(c, float), np.asarray(s, float)
    if s.sum() <= W:
        return np.ones(c.size)
    order = np.argsort(c)
    full = 0.0                       # GPUs of the jobs that run all the time
    for k, j in enumerate(order):
        rest = order[k:]
        L = (W - full) / (s[rest] / c[rest]).sum()
        if L <= c[j]:
            return np.minimum(1.0, L / c)
        full += s[j]
    raise AssertionError("unreachable: the jobs did not fit but every one ran all the time")


def lex_levels(coef, x):
    return (coef * x).sum(axis=1)


def lex_tests():
    """GAVEL_LP_METHOD=lexmaxmin on random instances of Gavel's LP."""
    from scipy.optimize import linprog
    os.environ["GAVEL_LP_METHOD"] = "lexmaxmin"
    rng = np.random.default_rng(7)
    gangs = np.array([1.0, 2.0, 4.0, 8.0])
    worst = 0.0
    # One worker type of W GPUs: rows c_j x_j (c_j = gang x normalised throughput, or the gang
    # alone as in max_min_fairness), x_j <= 1, sum s_j x_j <= W.  Fewer and more jobs than GPUs,
    # ties (equal gangs and throughputs), and every job fitting.
    for case in range(300):
        m = int(rng.integers(1, 25))
        W = float(rng.choice([4, 8, 16, 16, 32]))
        s = rng.choice(gangs, m)
        if case % 3 == 0:
            c = s.copy()
        elif case % 3 == 1:
            c = s * rng.uniform(0.2, 3.0, m)
        else:
            c = s * rng.choice([0.5, 1.0, 2.0], m)
        prob, x, t = gavel_lp(c.reshape(m, 1), s.reshape(m, 1), [W])
        want = water_fill(c, s, W)
        got = x.value.reshape(-1)
        err = np.abs(got - want).max()
        worst = max(worst, err)
        ok = prob.status == "optimal" and err < 1e-7 and abs(t - (c * want).min()) < 1e-7
        check("lex = water-fill, one type #%d" % case, ok, (m, W, s, c, got, want))
        # Jobs alike (same gang and coefficient) get the very same float (_canonical).
        same = all(got[i] == got[j] for i in range(m) for j in range(m)
                   if s[i] == s[j] and c[i] == c[j])
        check("lex equal jobs equal floats #%d" % case, same, got)
    print("lexmaxmin vs water-filling on one type: 300 instances, largest |x - x_wf| %.2e" % worst)
    got = cp._canonical(np.array([0.7999999999999953, 0.8, 0.7999999999999999, 1e-17, -0.0,
                                  -2e-16, 0.3, 0.3 + 2e-12, 1 - 1e-16]))
    check("canonical", got.tolist() == [0.8, 0.8, 0.8, 0.0, 0.0, 0.0, 0.3, 0.300000000002, 1.0]
          and not np.signbit(got).any(), got.tolist())
    check("water-fill hand case", np.allclose(water_fill([1, 2, 4, 8], [1, 2, 4, 8], 10),
                                              [1, 1, 0.875, 0.4375]))

    # Two worker types (8 and 4 GPUs): each row's level at least the max-min level t*, the
    # sorted levels lexicographically >= the dual simplex's, and max-min fair by definition: no
    # row can be raised while every row whose level is at most its own keeps its level.
    def lex_ge(a, b, tol=1e-7):
        for u, v in zip(np.sort(a), np.sort(b)):
            if u > v + tol:
                return True
            if u < v - tol:
                return False
        return True
    strict = 0
    for case in range(40):
        m = int(rng.integers(2, 12))
        s = rng.choice(gangs[:3], m)
        thr = rng.uniform(0.3, 2.0, (m, 2)) * (rng.random((m, 2)) > 0.15)
        thr[thr.sum(axis=1) == 0, 0] = 1.0
        coef = s[:, None] * thr
        scale = np.repeat(s[:, None], 2, axis=1)
        os.environ["GAVEL_LP_METHOD"] = "highs-ds"
        _, xd, td = gavel_lp(coef, scale, [8, 4])
        os.environ["GAVEL_LP_METHOD"] = "lexmaxmin"
        prob, xl, tl = gavel_lp(coef, scale, [8, 4])
        lv, dv = lex_levels(coef, xl.value), lex_levels(coef, xd.value)
        tag = " two types #%d" % case
        check("lex feasible" + tag, feasible(xl.value, scale, [8, 4], 1e-7), xl.value)
        check("lex t = t*" + tag, abs(tl - td) < 1e-7 and abs(lv.min() - td) < 1e-7, (tl, td))
        check("lex rows >= t*" + tag, np.all(lv >= td - 1e-7), (lv, td))
        check("lex >= highs-ds" + tag, lex_ge(lv, dv), (np.sort(lv), np.sort(dv)))
        strict += not lex_ge(dv, lv)
        # Max-min fair: maximise row i over x (m x 2, row-major) with every row j whose level is
        # at most row i's kept at its level, and the base constraints.
        n = 2 * m
        base_A = np.vstack([-np.eye(n),
                            np.kron(np.ones((1, m)), np.eye(2)) * scale.reshape(1, -1),
                            np.kron(np.eye(m), np.ones((1, 2)))])
        base_b = np.concatenate([np.zeros(n), [8, 4], np.ones(m)])
        E = np.kron(np.eye(m), np.ones((1, 2))) * coef.reshape(1, -1)
        fair = True
        for i in range(m):
            keep = [j for j in range(m) if j != i and lv[j] <= lv[i] + 1e-9]
            r = linprog(-E[i], A_ub=np.vstack([base_A, -E[keep]]) if keep else base_A,
                        b_ub=np.concatenate([base_b, -lv[keep]]) if keep else base_b,
                        bounds=(None, None), method="highs-ds")
            fair &= r.status == 0 and -r.fun <= lv[i] + 1e-7
        check("lex max-min fair" + tag, fair, lv)
    print("lexmaxmin on two types: 40 instances, levels lexicographically above the dual "
          "simplex's in %d" % strict)

    # Outside what lexmaxmin can answer: max min(x0, x1) with x1 <= 1 is bounded (1), but x0
    # can then grow without bound, so no lexicographic optimum is attained.
    x = cp.Variable(2)
    try:
        cp.Problem(cp.Maximize(cp.min(cp.multiply(np.ones(2), x))),
                   [x >= 0, cp.multiply(np.array([0.0, 1.0]), x) <= 1]).solve()
    except RuntimeError as e:
        check("lexmaxmin unbounded row stops", "unbounded" in str(e), str(e))
    else:
        check("lexmaxmin unbounded row stops", False, "no error")
    os.environ["GAVEL_LP_METHOD"] = "no-such-method"
    try:
        cp.Problem(cp.Maximize(cp.min(cp.sum(x))), [x <= 1]).solve()
    except NotImplementedError:
        check("unknown method raises", True)
    else:
        check("unknown method raises", False, "no error")


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
    for m in (cp.DEFAULT_METHOD, "lexmaxmin"):
        os.environ["GAVEL_LP_METHOD"] = m
        errors()
    lex_tests()
    os.environ["GAVEL_LP_METHOD"] = cp.DEFAULT_METHOD
    # The vertex methods and the interior method may return different optima of LP 4.
    print("LP 3b (non-unique), x1 by method: " +
          "; ".join("%s %.4f" % (m, f[1]) for m, f in faces.items()))
    print("LP 4 (non-unique), (a, b, c, d) by method: " +
          "; ".join("%s %s" % (m, np.array2string(f[0].reshape(-1), precision=4, separator=","))
                    for m, f in faces.items()))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
