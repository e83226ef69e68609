"""Sweeps: a grid of salus.simulate runs spread over a Dask distributed cluster, gathered into one
DataFrame (docs/python.md, "Sweeps on Dask").

    import salus
    frame = salus.sweep({"trace": ["a.csv", "b.csv"], "gpus": [1, 4, 16], "seed": [1, 2],
                         "policy": "fifo,pack,fair"})                     # a local cluster
    frame = salus.sweep(grid, client=Client("tcp://scheduler:8786"))     # a real one

Each point of the grid is one salus.simulate call run on a worker; its result is the point's
metrics, one row per policy, with the point's values in columns of their own. A run whose worker
is lost is run again on another (Dask's scheduler reassigns the tasks a lost worker held, up to
its distributed.scheduler.allowed-failures); a run that raises (bad input, a Python policy's
exception) is not retried: sweep raises it. Runs are deterministic, so a run again gives the same
row, and the frame is in grid order whatever order the runs end in.
"""
import itertools


def grid_points(grid):
    """The points of `grid`: a list of dicts of simulate's keywords as given, or a dict whose
    values are lists (or single values) expanded to their product, in key order of the dict."""
    if isinstance(grid, dict):
        keys = list(grid)
        values = [v if isinstance(v, (list, tuple)) else [v] for v in grid.values()]
        return [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    points = [dict(p) for p in grid]
    for p in points:
        if not isinstance(p, dict):
            raise TypeError("sweep: a grid is a dict of lists or a list of dicts")
    return points


def _label(value):
    """A point's value as a frame cell: names for policies and DataFrames, lists joined."""
    from . import Policy
    if isinstance(value, Policy):
        return value.name
    if isinstance(value, (list, tuple)):
        return ",".join(_label(v) for v in value)
    if type(value).__name__ == "DataFrame":
        return "<DataFrame>"
    return value


def run_point(index, point):
    """One grid point on a worker: simulate's metrics rows, led by the point's values."""
    from . import simulate
    options = dict(point)
    options.setdefault("quiet", True)
    result = simulate(**options)
    rows = []
    for row in result.metrics.to_dict("records"):
        out = {"point": index}
        # A keyword named as a metric (policy) is the grid's column grid_<name>.
        out.update({("grid_" + k if k in row else k): _label(v) for k, v in point.items()})
        out.update(row)
        rows.append(out)
    return rows


def sweep(grid, client=None, n_workers=None):
    """Runs every point of `grid` (grid_points) with salus.simulate on Dask and returns one pandas
    DataFrame: a row per point and policy, columns `point` (the point's place in the grid), the
    point's keywords (one named as a metric, policy, as grid_policy), then the run's metrics
    (Result.metrics). `client`: a
    dask.distributed.Client; None starts a local cluster of `n_workers` processes (default: one
    per CPU), one thread each, closed at the end."""
    import pandas as pd
    from dask.distributed import Client, LocalCluster, as_completed

    points = grid_points(grid)
    own = None
    if client is None:
        own = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(own)
    try:
        futures = [client.submit(run_point, i, p, pure=False) for i, p in enumerate(points)]
        index_of = {f.key: i for i, f in enumerate(futures)}
        rows = {}
        for future in as_completed(futures):
            rows[index_of[future.key]] = future.result()
        frame = pd.DataFrame([r for i in range(len(points)) for r in rows[i]])
    finally:
        if own is not None:
            client.close()
            own.close()
    return frame
