"""Salus in Python: salus-sim's simulator as a function, policies written in Python.

    import salus
    r = salus.simulate(trace="traces/examples/small.csv", policy=["fifo", "pack"])
    r.metrics          # one row per policy: makespan, queuing, JCTs (pandas DataFrame)
    r.jobs             # one row per job and policy (pandas DataFrame)
    r.summary          # the summary salus-sim writes with --summary-json (dict; r.summary_json: its text)

simulate() takes salus-sim's options by name (--gpu-mem: gpu_mem="16GiB"), with salus-sim's
defaults: both come from the one option table the program is built from (salus.options() lists
it). A bad value raises salus.InputError with salus-sim's message ("file:line: what").

A policy of your own subclasses salus.Policy and is passed as policy=MyPolicy() (docs/python.md).
"""
import copy
import json
import os
import tempfile

from . import _salus
from ._salus import InputError, Lane, RunReport, View

__all__ = ["simulate", "sweep", "gpus_needed", "Policy", "Result", "options", "policy_names", "InputError", "View", "Lane",
           "RunReport"]


def _find_data_dir():
    """The shipped data (catalog, default trace) beside this package: <build>/share/salus in a
    build tree (<build>/python/salus), <prefix>/share/salus once installed
    (<prefix>/lib/pythonX.Y/dist-packages/salus). salus-sim finds it from its own path the same
    way; SALUS_DATA_DIR, when set, is taken as given."""
    here = os.path.dirname(os.path.realpath(__file__))
    d = here
    for _ in range(5):
        d = os.path.dirname(d)
        candidate = os.path.join(d, "share", "salus")
        if os.path.isfile(os.path.join(candidate, "profiles", "catalog.json")):
            return os.path.realpath(candidate)
    return None


if not os.environ.get("SALUS_DATA_DIR"):
    _data = _find_data_dir()
    if _data is not None:
        os.environ["SALUS_DATA_DIR"] = _data


def options():
    """salus-sim's options as its option table declares them: a list of dicts with name (as a
    keyword of simulate: gpu_mem for --gpu-mem), option (--gpu-mem), value_name, default (the
    text salus-sim stores when it is not given; None: none) and help."""
    out = []
    for o in _salus.options():
        if o["name"] in ("help", "version"):
            continue
        out.append({"name": o["name"].replace("-", "_"), "option": "--" + o["name"], "value_name": o["value_name"],
                    "default": o["default"], "switch": o["switch"], "help": o["help"]})
    return out


def policy_names():
    """The built-in policies (fifo, srtf, pack, fair, las, priority)."""
    return list(_salus.policy_names())


class Policy:
    """A scheduling policy written in Python (core/policy.h, policies/README.md).

    Subclass it, define choose(view, lane), and pass an instance to simulate(policy=...). The loop
    calls the methods a subclass defines at its decision points; the others cost nothing. Jobs are
    indices into the run's jobs; `view` (salus.View) reads their specs and states and `lane`
    (salus.Lane) lists a lane's jobs. Both are valid only during the call.

    Class attributes:
      name           the policy's name in the results (default: the class's name, lower case);
                     not one of the built-ins'
      description    one line
      default_lanes  the lane mode when simulate is given no `lanes`: single, auto or exclusive
      lanes          the lane modes it can run in (another asked for runs in default_lanes)
      newcomer       how a job joining a lane that holds jobs fares there (a cluster places jobs
                     by it): "waits" (PACK), "takes_turn" (FAIR, LAS) or "by_order" (SRTF,
                     priority: then define starts_at_once)

    Methods (all optional but choose):
      begin(jobs)                         a run starts with `jobs` jobs: forget earlier runs
      admission_key(view, job) -> int     admission order, asked once at arrival (default 0:
                                          arrival order); ties by arrival order
      starts_at_once(view, lane, job)     newcomer "by_order": would `job` run next in `lane`
      on_admit(view, job)
      on_join(view, lane, job)
      on_iterations_done(view, run)       a run (salus.RunReport) ended
      on_finish(view, job, lane_id)
      choose(view, lane) -> job or (job, max_iterations)
      plan(view, lane) -> [(job, level, step, order), ...] or None   a rotation (core/policy.h)
      on_plan_done(view, lane_id, entries, iterations)

    On a cluster each GPU has a policy object of its own: the first GPU the instance given to
    simulate, the others copies of it (copy.deepcopy) made before the run starts.
    """

    name = None
    description = "a policy written in Python"
    default_lanes = "single"
    lanes = ("single", "auto")
    newcomer = "waits"

    _HOOKS = ("begin", "admission_key", "starts_at_once", "on_admit", "on_join", "on_iterations_done", "on_finish",
              "choose", "plan", "on_plan_done")

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("name") is None:
            cls.name = cls.__name__.lower()

    def _hooks(self):
        """The hooks this object's class defines, bound to it (the trampoline calls only these)."""
        return {h: getattr(self, h) for h in self._HOOKS if hasattr(type(self), h)}


class Result:
    """What simulate returns: the runs of salus-sim with the same options, as Python values.

      summary_json  the summary JSON's text, the bytes salus-sim --summary-json writes
      summary       the same, parsed (dict)
      metrics       pandas DataFrame, one row per policy: the summary's numbers of each run
      jobs          pandas DataFrame, one row per job and policy: salus-sim's <policy>_jobs.csv
                    columns, led by policy
      notes         the notes salus-sim prints (list of str)
      header        the line salus-sim prints over its table
      table         salus-sim's table (makespan, queuing, JCTs), as it prints it
    """

    def __init__(self, raw):
        self.summary_json = raw["summary_json"]
        self.summary = json.loads(self.summary_json)
        self.notes = list(raw["notes"])
        self.header = raw["header"].rstrip("\n")
        self.table = raw["table"] + raw["cluster_report"]
        self._metrics = None
        self._jobs = None

    @property
    def metrics(self):
        if self._metrics is None:
            import pandas as pd
            rows = []
            for r in self.summary["results"]:
                row = {k: v for k, v in r.items() if not isinstance(v, (dict, list))}
                for k, v in r.get("admissions", {}).items():
                    row["admissions_" + k] = v
                rows.append(row)
            cols = ["policy"] + sorted({k for row in rows for k in row} - {"policy"})
            self._metrics = pd.DataFrame(rows, columns=cols)
        return self._metrics

    @property
    def jobs(self):
        if self._jobs is None:
            import pandas as pd
            cols = ["policy", "id", "workload", "arrival_s", "start_s", "finish_s", "jct_s", "queuing_s", "status",
                    "lane", "iterations", "reason"]
            frames = []
            for r in self.summary["results"]:
                f = pd.DataFrame(r["jobs"], columns=cols[1:])
                f.insert(0, "policy", r["policy"])
                frames.append(f)
            self._jobs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)
        return self._jobs

    def __repr__(self):
        return self.header + "\n" + self.table


def _is_dataframe(x):
    return type(x).__name__ == "DataFrame" and hasattr(x, "to_csv")


def _value_text(option, value):
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def simulate(trace=None, policy=None, gpus=None, cluster=None, **options):
    """Runs salus-sim on a trace and returns a Result.

    trace    a trace file in any format salus-sim reads (path), or a pandas DataFrame with a
             trace's columns (native: job_id, arrival_s, iterations and workload or
             persistent_mib, ephemeral_mib, iter_ms); None: the shipped 100-job trace
    policy   a built-in policy's name, a salus.Policy instance, or a list of them (None: every
             built-in policy, salus-sim's default)
    gpus     a cluster of this many GPUs; cluster: a cluster file instead
    options  salus-sim's other options by name, '-' written '_' (gpu_mem="8GiB",
             interference="none", switch_cost_ms=0, lanes="auto", quiet=True, ...), with
             salus-sim's defaults; True/False for on|off options, a list for a comma list.
             salus.options() lists them.

    Raises salus.InputError with salus-sim's message for bad input; an exception raised by a
    Python policy stops the run and propagates with its traceback.
    """
    args = []
    python_policies = []
    if policy is not None:
        names = []
        for p in (policy if isinstance(policy, (list, tuple)) else [policy]):
            if isinstance(p, Policy):
                if not isinstance(p.name, str) or not p.name or any(c in p.name for c in ", \t\n"):
                    raise ValueError("policy name %r: a word without commas or spaces" % (p.name,))
                python_policies.append((p.name, p))
                names.append(p.name)
            elif isinstance(p, type) and issubclass(p, Policy):
                raise TypeError("policy: pass an instance of %s, not the class" % p.__name__)
            else:
                names.append(str(p))
        args += ["--policy", ",".join(names)]
    if gpus is not None:
        args += ["--gpus", str(gpus)]
    if cluster is not None:
        args += ["--cluster", _value_text("cluster", cluster)]
    switches = {o["name"]: o["switch"] for o in _salus.options()}
    for key, value in options.items():
        name = key.replace("_", "-")
        if name in ("help", "version", "trace", "policy", "gpus", "cluster"):
            raise TypeError("simulate: '%s' is not an option here" % key)
        if value is None:
            continue
        if switches.get(name):
            if value:
                args.append("--" + name)
            continue
        args += ["--" + name, _value_text(name, value)]
    with tempfile.TemporaryDirectory(prefix="salus-") as tmp:
        trace_name = None
        if trace is not None:
            if _is_dataframe(trace):
                path = os.path.join(tmp, "dataframe.csv")
                trace.to_csv(path, index=False)
                trace_name = "<DataFrame>"
            else:
                path = os.fspath(trace)
            args += ["--trace", path]
        try:
            raw = _salus.run(args, python_policies, trace_name)
        except InputError as e:
            if trace_name is None:
                raise
            # A DataFrame's rows are lines 2, 3, ... of the file it was written to: named as such.
            raise InputError(str(e).replace(path, trace_name)) from None
    return Result(raw)


from .sweep import gpus_needed, sweep  # noqa: E402  (needs simulate and Policy above)
