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


# salus-experiment gpus_needed's configurations: (name, policy, lanes).
GPUS_NEEDED_CONFIGURATIONS = [
    ("exclusive FIFO", "fifo", "exclusive"),
    ("exclusive SRTF", "srtf", "exclusive"),
    ("Salus PACK", "pack", "auto"),
    ("Salus SRTF", "srtf", "single"),
    ("Salus FAIR", "fair", "single"),
]


def gpus_needed(trace, bound_jct_s, max_gpus, min_gpus=1, configurations=None, client=None, n_workers=None,
                **options):
    """The fewest GPUs in [min_gpus, max_gpus] at which each configuration's average JCT is at most
    `bound_jct_s` with every job done or rejected by its own reason, every cluster size run as
    `salus.simulate(trace=..., gpus=N, ...)` runs it (salus-sim --gpus N) and the sizes spread over
    Dask with sweep (`client`, `n_workers` as there). Exact whatever the curve's shape: every N in
    the range is run, so the answer's every smaller N was run and missed (salus-experiment
    gpus_needed scans upward and stops at the first N that meets the bound; this runs them all at
    once instead). `configurations`: (name, policy, lanes) triples, default gpus_needed's five.
    Returns a DataFrame, a row per configuration (gpus_needed: None where no N in the range
    meets the bound), with the whole curve (a row per configuration and N) in .attrs["curve"]."""
    import pandas as pd

    if not (isinstance(min_gpus, int) and isinstance(max_gpus, int) and 1 <= min_gpus <= max_gpus):
        raise ValueError("gpus_needed: give 1 <= min_gpus <= max_gpus (whole numbers)")
    configurations = configurations or GPUS_NEEDED_CONFIGURATIONS
    points = []
    for name, policy, lanes in configurations:
        for n in range(min_gpus, max_gpus + 1):
            points.append(dict(options, trace=trace, policy=policy, lanes=lanes, gpus=n))
    frame = sweep(points, client=client, n_workers=n_workers)
    names = {(policy, lanes): name for name, policy, lanes in configurations}
    frame.insert(0, "configuration", [names[(p, l)] for p, l in zip(frame["grid_policy"], frame["lanes"])])
    frame["meets"] = (frame["avg_jct_s"] <= bound_jct_s) & (frame["jobs_done"] + frame["jobs_rejected"] ==
                                                             frame["jobs_total"]) & (frame["jobs_done"] > 0)
    rows = []
    for name, policy, lanes in configurations:
        curve = frame[frame["configuration"] == name].sort_values("gpus")
        met = curve[curve["meets"]]
        first = met.iloc[0] if len(met) else None
        rows.append({"configuration": name, "policy": policy, "lanes": lanes,
                     "gpus_needed": None if first is None else int(first["gpus"]),
                     "avg_jct_s": None if first is None else float(first["avg_jct_s"]),
                     "avg_queuing_s": None if first is None else float(first["avg_queuing_s"])})
    answer = pd.DataFrame(rows)
    answer.attrs["curve"] = frame[["configuration", "gpus", "avg_jct_s", "avg_queuing_s", "jobs_done",
                                   "jobs_rejected", "meets"]].reset_index(drop=True)
    return answer
