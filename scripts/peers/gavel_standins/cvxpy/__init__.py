"""Inert stand-in for cvxpy (no Debian 12 package provides cvxpy).

Gavel's policies/*.py import cvxpy at module load, but the FIFO policies (policies/fifo.py)
never call it.  This stand-in lets the import succeed; any use of it (an LP-based policy such
as max_min_fairness) stops the run at once with this message, so no result is ever produced
by something other than cvxpy.  See scripts/peers/README.md.
"""


def __getattr__(name):
    raise RuntimeError("cvxpy stand-in: Gavel called cvxpy.%s; cvxpy is not installed "
                       "(no Debian package), so this policy cannot run here" % name)
