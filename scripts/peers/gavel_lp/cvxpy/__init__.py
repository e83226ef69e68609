"""A small, real stand-in for cvxpy: exactly what Gavel's max-min fairness policies call.

No Debian 12 package provides cvxpy (nor ECOS, Gavel's default solver).  Gavel's
scheduler/policies/max_min_fairness.py (MaxMinFairnessPolicy, MaxMinFairnessPolicyWithPerf)
and policies/policy.py (Policy.get_base_constraints) build one LP:

    x = cp.Variable((m, n))
    objective = cp.Maximize(cp.min(cp.sum(cp.multiply(C, x), axis=1)))
    constraints = [x >= 0,
                   cp.sum(cp.multiply(S, x), axis=0) <= num_workers,
                   cp.sum(x, axis=1) <= 1]
    prob = cp.Problem(objective, constraints); prob.solve(solver='ECOS')
    prob.status; x.value

This module implements that subset and nothing else: one matrix (or vector) Variable; affine
expressions in it built with multiply(constant, expr), sum(expr[, axis=0|1]); min(affine) only
as the argument of Maximize; Maximize(affine scalar); constraints expr >= c, expr <= c with c a
number, list or numpy array of the expression's shape (or broadcastable to it); Problem.solve,
.status, .value, Variable.value.  Anything else (another cvxpy function or attribute, +, -, *,
indexing, two Variables in one problem, Minimize, a non-linear atom, a sparse constant, another
solver's keyword arguments) raises NotImplementedError, so no policy outside that subset can be
solved wrongly in silence.

Maximize(min_i(a_i . x + b_i)) becomes the epigraph LP: maximize t subject to t <= a_i . x + b_i
for every i, plus the constraints; it is solved with scipy (HiGHS).  Which HiGHS method is
chosen by the environment variable GAVEL_LP_METHOD (METHODS below; default 'ipx'), and the
solver name Gavel passes (ECOS, its default) is only checked to be one Gavel offers.  Why the
method matters: such an LP often has many optimal solutions (a job that is not a bottleneck can
get more or less of the spare GPUs at the same objective value).  cvxpy+ECOS, an interior-point
method, stops at a point inside the optimal face; a simplex method (or an interior-point method
followed by crossover) returns a vertex of it.  Gavel then turns the allocation into round
priorities, so the two answers can schedule differently.  See scripts/peers/README.md.

GAVEL_LP_METHOD=lexmaxmin does not return an optimum of that one LP chosen by a solver: it returns
the lexicographic max-min optimum of Maximize(min_i(row_i)) (_lexmaxmin, "progressive filling"):
the least row as large as possible, then the next least, and so on.  Its row values are unique
(they do not depend on the solver); it is one point of the first LP's optimal face.

Two more environment variables, for studying the LPs (neither changes the answer):
GAVEL_LP_STATS=FILE appends one line per LP to FILE (_face_stats: the optimum, the width of the
optimal face along a random direction, the distance to the other methods' answers), and
GAVEL_LP_DUMP=DIR saves each LP as DIR/lpNNNN.npz (cost, A, b of min cost.z, A z <= b).
"""
import atexit
import os
import sys

import numpy as np

__version__ = "gavel-lp-standin"

OPTIMAL = "optimal"
INFEASIBLE = "infeasible"
UNBOUNDED = "unbounded"

# GAVEL_LP_METHOD values:
#   ipx       HiGHS' interior-point solver IPX with crossover OFF and presolve OFF: a point in
#             the relative interior of the optimal face, like ECOS (an interior-point method
#             without crossover).  scipy.optimize.linprog(method='highs-ipm') always runs
#             crossover in scipy 1.10 (its option dictionary fixes it; HiGHS' own option
#             run_crossover is not passed through), so this calls scipy's HiGHS wrapper
#             (scipy.optimize._highs._highs_wrapper) itself with run_crossover=False.
#   highs-ds  scipy.optimize.linprog(method='highs-ds'): dual simplex, a vertex.
#   highs-ipm scipy.optimize.linprog(method='highs-ipm'): IPX then crossover, a vertex.
#   cvxopt    cvxopt.solvers.lp (Debian's python3-cvxopt, needed for this method only):
#             CVXOPT's primal-dual path-following method with Nesterov-Todd scaling and
#             Mehrotra correction, the same family as ECOS, at ECOS' default tolerances (1e-8);
#             another interior point of the optimal face, to see how much the answer depends on
#             the interior-point code.  Not used by the committed fixtures.
#   lexmaxmin the LEXICOGRAPHIC max-min optimum of Maximize(min(rows)) (_lexmaxmin): a sequence
#             of LPs solved by scipy.optimize.linprog(method='highs-ds') that fix the rows' levels
#             from the least up.  The levels are unique, so the answer is the same for any exact
#             LP solver; x itself is unique where the levels determine it (e.g. one worker
#             type: row i = c_i x_i), else it is the last LP's vertex; entries equal within
#             1e-12 are made equal floats (_canonical).  Maximize(affine scalar) is the case of
#             one row.
LP_METHODS = ("ipx", "highs-ds", "highs-ipm", "cvxopt")   # one LP, one solver call
METHODS = LP_METHODS + ("lexmaxmin",)
DEFAULT_METHOD = "ipx"

# Solvers Gavel's driver offers (scripts/drivers/simulate_scheduler_with_trace.py --solver).
_GAVEL_SOLVERS = ("ECOS", "GUROBI", "SCS")

# The LPs solved in this process; a summary line goes to stderr at exit (Gavel's log, which
# scripts/peers/run-gavel.sh copies into each fixture's header).
stats = {"solves": 0, "retries": 0, "lex_lps": 0, "lex_passes": 0}


def _summary():
    if stats["solves"]:
        sys.stderr.write("cvxpy stand-in: %d LPs solved (GAVEL_LP_METHOD=%s), %d at a looser "
                         "tolerance\n" % (stats["solves"], method(), stats["retries"]))
        if stats["lex_lps"]:
            sys.stderr.write("cvxpy stand-in: lexmaxmin: %d passes, %d LPs of HiGHS' dual "
                             "simplex\n" % (stats["lex_passes"], stats["lex_lps"]))


atexit.register(_summary)


def method():
    m = os.environ.get("GAVEL_LP_METHOD", DEFAULT_METHOD)
    if m not in METHODS:
        raise NotImplementedError("cvxpy stand-in: GAVEL_LP_METHOD=%r is not one of %s"
                                  % (m, ", ".join(METHODS)))
    return m


def _unsupported(what):
    raise NotImplementedError(
        "cvxpy stand-in (scripts/peers/gavel_lp): %s is outside the subset it implements "
        "(Gavel's max_min_fairness and max_min_fairness_perf policies only)" % what)


def __getattr__(name):
    _unsupported("cvxpy.%s" % name)


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    if len(shape) not in (1, 2) or any(s <= 0 for s in shape):
        _unsupported("a Variable of shape %r" % (shape,))
    return shape


def _constant(c, what):
    if hasattr(c, "toarray") or type(c).__module__.startswith("scipy.sparse"):
        _unsupported("a sparse constant in %s" % what)
    if isinstance(c, Expression):
        _unsupported("%s of two expressions (only constant * expression is affine)" % what)
    a = np.asarray(c, dtype=float)
    if a.dtype == object or not np.all(np.isfinite(a)):
        _unsupported("a non-finite or non-numeric constant in %s" % what)
    return a


class Expression:
    """An affine expression coef @ vec(x) + const in one Variable x (vec: row-major)."""

    # numpy defers to these objects in mixed comparisons (array <= expr).
    __array_ufunc__ = None

    def __init__(self, var, shape, coef, const):
        self.var, self.shape, self.coef, self.const = var, shape, coef, const

    @property
    def size(self):
        return int(np.prod(self.shape)) if self.shape else 1

    def __ge__(self, other):
        return Constraint(self, ">=", other)

    def __le__(self, other):
        return Constraint(self, "<=", other)

    def __eq__(self, other):
        _unsupported("an equality constraint")

    __hash__ = object.__hash__

    def _no(self, *args, **kwargs):
        _unsupported("this operation on an expression (+, -, *, /, @, [], ...)")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _no
    __truediv__ = __rtruediv__ = __matmul__ = __rmatmul__ = __neg__ = _no
    __pow__ = __getitem__ = __lt__ = __gt__ = __ne__ = __bool__ = _no
    __iter__ = __len__ = _no

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        _unsupported("expression.%s" % name)


class Variable(Expression):
    _count = 0

    def __init__(self, shape=None, **kwargs):
        if shape is None or kwargs:
            _unsupported("a scalar Variable or Variable keyword arguments")
        shape = _shape(shape)
        size = int(np.prod(shape))
        Expression.__init__(self, self, shape, np.eye(size), np.zeros(size))
        Variable._count += 1
        self._id = Variable._count
        self._value = None

    @property
    def value(self):
        return self._value


def multiply(a, b):
    """Elementwise constant * affine expression (either order)."""
    if isinstance(a, Expression) and isinstance(b, Expression):
        _unsupported("multiply of two expressions")
    if isinstance(b, Expression):
        a, b = b, a
    if not isinstance(a, Expression):
        _unsupported("multiply without a Variable")
    c = _constant(b, "multiply")
    if c.ndim > len(a.shape) or (c.ndim and np.broadcast_shapes(c.shape, a.shape) != a.shape):
        _unsupported("multiply by a constant of shape %r with an expression of shape %r"
                     % (c.shape, a.shape))
    w = np.broadcast_to(c, a.shape).reshape(-1)
    return Expression(a.var, a.shape, a.coef * w[:, None], a.const * w)


def sum(expr, axis=None, **kwargs):  # noqa: A001 (cvxpy's name)
    if not isinstance(expr, Expression) or kwargs:
        _unsupported("sum of a non-expression or with keyword arguments other than axis")
    n = expr.coef.shape[1]
    if axis is None:
        return Expression(expr.var, (), expr.coef.sum(axis=0, keepdims=True),
                          np.array([expr.const.sum()]))
    if len(expr.shape) != 2 or axis not in (0, 1):
        _unsupported("sum over axis %r of an expression of shape %r" % (axis, expr.shape))
    r, c = expr.shape
    coef = expr.coef.reshape(r, c, n).sum(axis=axis)
    const = expr.const.reshape(r, c).sum(axis=axis)
    return Expression(expr.var, (coef.shape[0],), coef, const)


class _Min:
    def __init__(self, expr):
        self.expr = expr

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        _unsupported("min(...).%s" % name)


def min(expr, **kwargs):  # noqa: A001 (cvxpy's name)
    if not isinstance(expr, Expression) or kwargs:
        _unsupported("min of a non-expression or with keyword arguments")
    return _Min(expr)


class Maximize:
    def __init__(self, expr):
        if isinstance(expr, _Min):
            self.rows = expr.expr
        elif isinstance(expr, Expression) and expr.size == 1:
            self.rows = None
        else:
            _unsupported("Maximize of something other than min(affine) or an affine scalar")
        self.expr = expr.expr if isinstance(expr, _Min) else expr


def Minimize(expr):  # noqa: N802 (cvxpy's name)
    _unsupported("Minimize")


class Constraint:
    def __init__(self, expr, sense, rhs):
        c = _constant(rhs, "a constraint's right-hand side")
        try:
            c = np.broadcast_to(c, expr.shape).reshape(-1)
        except ValueError:
            _unsupported("a constraint between shapes %r and %r" % (expr.shape, np.shape(rhs)))
        self.expr, self.sense, self.rhs = expr, sense, c

    def _no(self, *args):
        _unsupported("combining constraints")

    __bool__ = __and__ = __or__ = _no


class Problem:
    def __init__(self, objective, constraints=()):
        if not isinstance(objective, Maximize):
            _unsupported("a Problem whose objective is not Maximize(...)")
        constraints = list(constraints)
        if not all(isinstance(c, Constraint) for c in constraints):
            _unsupported("a constraint that is not expr >= c or expr <= c")
        var = objective.expr.var
        if any(c.expr.var is not var for c in constraints):
            _unsupported("more than one Variable in a Problem")
        self.objective, self.constraints, self.var = objective, constraints, var
        self.status = None
        self.value = None

    def solve(self, solver=None, **kwargs):
        if kwargs:
            _unsupported("solve(%s)" % ", ".join("%s=..." % k for k in sorted(kwargs)))
        if solver is not None and solver not in _GAVEL_SOLVERS:
            _unsupported("solver %r" % (solver,))
        x, t, self.status = _solve_lp(self.objective, self.constraints, self.var)
        if self.status != OPTIMAL:
            # cvxpy would leave x.value None (infeasible/unbounded) and Gavel would then fail
            # on x.value.clip; stop here with the reason instead.
            raise RuntimeError("cvxpy stand-in: the LP is %s (GAVEL_LP_METHOD=%s)"
                               % (self.status, method()))
        self.var._value = x.reshape(self.var.shape)
        self.value = t
        return t


def _solve_lp(objective, constraints, var):
    """Returns (x, objective value, status).  Variables z = [vec(x), t] (t only for min)."""
    n = var.size
    rows, rhs = [], []
    for c in constraints:
        a, b = c.expr.coef, c.rhs - c.expr.const          # a z <= b   or   a z >= b
        if c.sense == ">=":
            a, b = -a, -b
        rows.append(a)
        rhs.append(b)
    epi = objective.rows is not None
    if method() == "lexmaxmin":
        # The constraints as A x <= b (without t); the rows of min(...) (or the one scalar).
        e = objective.rows if epi else objective.expr
        A = np.vstack(rows) if rows else np.zeros((0, n))
        b = np.concatenate(rhs) if rhs else np.zeros(0)
        x, levels, status = _lexmaxmin(e.coef, e.const, A, b)
        stats["solves"] += 1
        if status != OPTIMAL:
            return None, None, status
        value = float(levels.min()) if epi else float(levels[0])
        if os.environ.get("GAVEL_LP_DUMP") or os.environ.get("GAVEL_LP_STATS"):
            # The same epigraph LP as the other methods, and this answer as a point of it.
            cost, A, b = _epigraph(A, b, e.coef, e.const) if epi else (-e.coef.reshape(-1), A, b)
            z = np.append(x, value) if epi else x
            if os.environ.get("GAVEL_LP_DUMP"):
                np.savez(os.environ["GAVEL_LP_DUMP"] + "/lp%04d.npz" % (stats["solves"] - 1),
                         cost=cost, A=A, b=b)
            if os.environ.get("GAVEL_LP_STATS"):
                _face_stats(cost, A, b, z, n, var.shape, os.environ["GAVEL_LP_STATS"])
        return x, value, status
    if epi:
        # t <= a_i z + const_i   <=>   -a_i z + t <= const_i
        e = objective.rows
        rows = [np.hstack([r, np.zeros((r.shape[0], 1))]) for r in rows]
        rows.append(np.hstack([-e.coef, np.ones((e.coef.shape[0], 1))]))
        rhs.append(e.const)
        cost = np.zeros(n + 1)
        cost[n] = -1.0
    else:
        cost = -objective.expr.coef.reshape(-1)
    A = np.vstack(rows) if rows else np.zeros((0, cost.size))
    b = np.concatenate(rhs) if rhs else np.zeros(0)
    if os.environ.get("GAVEL_LP_DUMP"):
        np.savez(os.environ["GAVEL_LP_DUMP"] + "/lp%04d.npz" % stats["solves"], cost=cost, A=A, b=b)
    z, status = _highs(cost, A, b, method())
    stats["solves"] += 1
    if status != OPTIMAL:
        return None, None, status
    if os.environ.get("GAVEL_LP_STATS"):
        _face_stats(cost, A, b, z, n, var.shape, os.environ["GAVEL_LP_STATS"])
    x = z[:n]
    value = float(z[n]) if epi else float(objective.expr.coef.reshape(-1) @ x
                                          + objective.expr.const[0])
    return x, value, status


def _epigraph(A, b, E, e):
    """max t s.t. t <= E x + e, A x <= b as min cost.z s.t. A' z <= b', z = [x, t]."""
    k = E.shape[0]
    A2 = np.vstack([np.hstack([A, np.zeros((A.shape[0], 1))]),
                    np.hstack([-E, np.ones((k, 1))])])
    cost = np.zeros(E.shape[1] + 1)
    cost[-1] = -1.0
    return cost, A2, np.concatenate([b, e])


# Two levels closer than LEX_TOL * max(1, |t|) are the same level for _lexmaxmin.
LEX_TOL = 1e-9


def _ds(cost, A, b):
    """min cost.z s.t. A z <= b, z free, by HiGHS' dual simplex; returns (z, status)."""
    from scipy.optimize import linprog
    stats["lex_lps"] += 1
    r = linprog(cost, A_ub=A, b_ub=b, bounds=(None, None), method="highs-ds")
    status = {0: OPTIMAL, 2: INFEASIBLE, 3: UNBOUNDED}.get(r.status, None)
    if status is None:
        return None, "solver_error (linprog status %d: %s)" % (r.status, r.message)
    return (r.x if status == OPTIMAL else None), status


def _lexmaxmin(E, e, A, b):
    """The lexicographic max-min optimum of the rows r(x) = E x + e subject to A x <= b (x
    free): the least row as large as possible, then, with it held there, the next least, and so
    on ("progressive filling").  Returns (x, levels, status), levels[i] = the level of row i
    (which r_i(x) meets).  Each pass, with the rows fixed so far held at >= their levels:

      1. t* = max t s.t. every unfixed row >= t (an LP in [x, t]);
      2. the candidates C = the unfixed rows; repeat: maximise the sum of the rows in C subject
         to every unfixed row >= t*; a row of C above t* + tol in that answer can exceed t*
         while all the others stay >= t*, so it leaves C; when none is above, no row of C can
         exceed t* (by more than |C| tol) while the others stay >= t*: they are fixed at t*.
         Each LP either ends the pass or removes a row from C; a row that cannot exceed t*
         never leaves C, and LP duality says there is one, so every pass fixes at least one row.

    tol = LEX_TOL * max(1, |t*|).  The levels are unique; x is the last LP's answer (a vertex),
    which meets every level (it is any point of {rows >= levels, A x <= b}, where every row is
    at its level), with entries equal within 1e-12 made equal floats (_canonical).  INFEASIBLE when A x <= b is; UNBOUNDED when some row can grow without bound
    while the others stay at or above their levels (then no lexicographic optimum is attained).
    """
    k, n = E.shape
    level = np.zeros(k)
    fixed = np.zeros(k, dtype=bool)
    x = None
    while not fixed.all():
        stats["lex_passes"] += 1
        U, F = ~fixed, fixed
        # 1. max t s.t. E_U x + e_U >= t, E_F x + e_F >= level_F, A x <= b.
        A1 = np.vstack([np.hstack([A, np.zeros((A.shape[0], 1))]),
                        np.hstack([-E[U], np.ones((U.sum(), 1))]),
                        np.hstack([-E[F], np.zeros((F.sum(), 1))])])
        b1 = np.concatenate([b, e[U], e[F] - level[F]])
        cost = np.zeros(n + 1)
        cost[n] = -1.0
        z, status = _ds(cost, A1, b1)
        if status != OPTIMAL:
            return None, None, status
        t = float(z[n])
        x = z[:n]
        tol = LEX_TOL * np.maximum(1.0, abs(t))
        # 2. which unfixed rows cannot exceed t while the others stay >= t.
        A2 = np.vstack([A, -E[U], -E[F]])
        b2 = np.concatenate([b, e[U] - t, e[F] - level[F]])
        C = U.copy()
        while True:
            z, status = _ds(-E[C].sum(axis=0), A2, b2)
            if status != OPTIMAL:
                return None, None, status
            x = z
            above = C & (E @ z + e > t + tol)
            if not above.any():
                break
            C &= ~above
            if not C.any():
                raise RuntimeError("cvxpy stand-in: lexmaxmin found every row above the level "
                                   "%.17g in turn (numerical trouble)" % t)
        level[C] = t
        fixed |= C
    return _canonical(x), level, OPTIMAL


# Entries of lexmaxmin's x closer than this are taken to be equal (_canonical).
CANON_GAP = 1e-12


def _canonical(x):
    """lexmaxmin's x without the solver's last bits.  Exactly equal entries of the optimum come
    out of the LPs with round-off of a few 1e-16 that differs from entry to entry (0.8 as
    0.7999999999999953 for one job and 0.7999999999999999 for the others); a caller that breaks
    ties between equal values by their order (Gavel's round priorities) would then follow the
    solver's last bits.  So: sort the entries; runs in which consecutive entries differ by at
    most CANON_GAP form groups; each group's entries all take the group's median rounded to 12
    decimals (+ 0.0: no -0.0).  Values apart by more than 1e-12 stay apart; the LPs' own
    tolerances are far larger (1e-9 between levels, 1e-7 feasibility)."""
    x = np.asarray(x, dtype=float).copy()
    if x.size == 0:
        return x
    order = np.argsort(x, kind="stable")
    v = x[order]
    cuts = np.flatnonzero(np.diff(v) > CANON_GAP) + 1
    for grp in np.split(np.arange(v.size), cuts):
        x[order[grp]] = np.round(np.median(v[grp]), 12) + 0.0
    return x


def _face_stats(cost, A, b, z, n, shape, path):
    """Appends one line on this LP's optimal face to PATH (for scripts/peers/README.md; the
    answer returned to Gavel is not changed): the solve's number, the Variable's shape, the
    optimum, how far apart the points of the face reach along a random direction (0 when the
    optimum is unique), and the largest difference between this method's allocation and each
    other method's, both clipped to [0, 1] as Gavel clips x.value."""
    from scipy.optimize import linprog
    opt = float(cost @ z)
    eps = 1e-9 * (1.0 + abs(opt))
    rng = np.random.default_rng(stats["solves"])
    w = np.zeros(cost.size)
    w[:n] = rng.uniform(-1.0, 1.0, n)
    face_A, face_b = np.vstack([A, cost]), np.append(b, opt + eps)
    ends = []
    for sign in (1.0, -1.0):
        r = linprog(sign * w, A_ub=face_A, b_ub=face_b, bounds=(None, None), method="highs-ds")
        ends.append(sign * r.fun if r.status == 0 else float("nan"))
    width = ends[1] - ends[0]
    clip = lambda v: np.clip(v[:n], 0.0, 1.0)  # noqa: E731
    diffs = []
    for other in LP_METHODS:
        if other == method():
            continue
        zo, so = _highs(cost, A, b, other, primary=False)
        diffs.append("%s=%.3g" % (other, np.abs(clip(z) - clip(zo)).max() if so == OPTIMAL
                                 else float("nan")))
    with open(path, "a") as f:
        f.write("%d\t%s\t%.9g\t%.3g\t%s\n" % (stats["solves"], "x".join(map(str, shape)),
                                              -opt, width, "\t".join(diffs)))


def _cvxopt(cost, A, b, primary=True):
    """min cost.z subject to A z <= b with cvxopt.solvers.lp (conelp); returns (z, status).
    Like ipx, a solve that ends 'unknown' at tolerance 1e-8 is repeated at 1e-7, then 1e-6."""
    import cvxopt
    from cvxopt import solvers
    c, G, h = cvxopt.matrix(cost), cvxopt.matrix(A), cvxopt.matrix(b)
    for tol in (1e-8, 1e-7, 1e-6):
        r = solvers.lp(c, G, h, options={"show_progress": False, "abstol": tol, "reltol": tol,
                                         "feastol": tol, "maxiters": 100})
        if r["status"] == "optimal":
            if tol != 1e-8 and primary:
                stats["retries"] += 1
                sys.stderr.write("cvxpy stand-in: LP %d solved by cvxopt at tolerance %g\n"
                                 % (stats["solves"] + 1, tol))
            return np.array(r["x"]).reshape(-1), OPTIMAL
        if r["status"] in ("primal infeasible", "dual infeasible"):
            return None, INFEASIBLE if r["status"] == "primal infeasible" else UNBOUNDED
    return None, "solver_error (cvxopt status %s)" % r["status"]


def _highs(cost, A, b, m, primary=True):
    """min cost.z subject to A z <= b, z free; returns (z, status)."""
    from scipy.optimize import linprog
    if m == "cvxopt":
        return _cvxopt(cost, A, b, primary)
    if m in ("highs-ds", "highs-ipm"):
        r = linprog(cost, A_ub=A, b_ub=b, bounds=(None, None), method=m)
        status = {0: OPTIMAL, 2: INFEASIBLE, 3: UNBOUNDED}.get(r.status, "solver_error")
        return r.x, status
    # m == "ipx": scipy's own HiGHS wrapper, as scipy.optimize._linprog_highs._linprog_highs
    # calls it, with presolve and crossover off.  IPX stops at a relative objective gap of
    # ipm_optimality_tolerance (1e-8, as ECOS' reltol); when it ends 'imprecise' just above it
    # (HiGHS then reports model status Unknown and no x), the solve is repeated with 1e-7, then
    # 1e-6: ECOS similarly accepts an 'optimal_inaccurate' point at reduced tolerances, which
    # cvxpy reports as such and Gavel uses after a warning.  Each retry is noted on stderr.
    from scipy.optimize._highs._highs_wrapper import _highs_wrapper
    from scipy.optimize import _linprog_highs as lh
    from scipy.sparse import csc_matrix
    big = 1e30    # scipy's _replace_inf: HiGHS' infinity
    A = csc_matrix(A)
    nz = cost.size
    st = None
    for tol in (1e-8, 1e-7, 1e-6):
        options = {
            "presolve": False,
            "sense": lh.HIGHS_OBJECTIVE_SENSE_MINIMIZE,
            "solver": "ipm",
            "run_crossover": False,
            "ipm_optimality_tolerance": tol,
            "highs_debug_level": lh.MESSAGE_LEVEL_NONE,
            "log_to_console": False,
            "output_flag": False,
        }
        res = _highs_wrapper(cost, A.indptr, A.indices, A.data, np.full(b.size, -big), b,
                             np.full(nz, -big), np.full(nz, big), np.empty(0, dtype=np.uint8),
                             options)
        st = res.get("status")
        if st == lh.MODEL_STATUS_OPTIMAL:
            if res.get("crossover_nit", 0):
                raise RuntimeError("cvxpy stand-in: HiGHS ran crossover although it was off")
            if tol != 1e-8 and primary:
                stats["retries"] += 1
                sys.stderr.write("cvxpy stand-in: LP %d solved by IPX at optimality tolerance "
                                 "%g (imprecise at 1e-8)\n" % (stats["solves"] + 1, tol))
            return np.array(res["x"]), OPTIMAL
        if st in (lh.MODEL_STATUS_INFEASIBLE, lh.MODEL_STATUS_UNBOUNDED,
                  lh.MODEL_STATUS_UNBOUNDED_OR_INFEASIBLE):
            break
    if st == lh.MODEL_STATUS_INFEASIBLE:
        return None, INFEASIBLE
    if st == lh.MODEL_STATUS_UNBOUNDED:
        return None, UNBOUNDED
    return None, "solver_error (HiGHS status %s: %s)" % (st, res.get("message"))
