#!/usr/bin/python3
"""Turn a peer simulator's own output into the per-job CSV of tests/data/peers/.

  convert.py tiresias JOB_CSV OUT_CSV HEADER_FILE
  convert.py gavel    TRACE LOG OUT_CSV HEADER_FILE

HEADER_FILE holds the '# ...' lines written first (the peer, its commit, the command, versions).
Only the peer's own output is read; nothing is recomputed except what is stated per column in
tests/data/peers/README.md.  Run with Debian's /usr/bin/python3 (standard library only).
"""
import csv
import re
import sys


def fmt(x):
    """Seconds with 3 decimals, trailing zeros kept (stable bytes)."""
    return "%.3f" % x


def write(out_path, header_path, columns, rows):
    with open(header_path) as f:
        header = f.read()
    with open(out_path, "w", newline="") as f:
        f.write(header)
        if not header.endswith("\n"):
            f.write("\n")
        f.write(",".join(columns) + "\n")
        for r in rows:
            f.write(",".join(str(r[c]) for c in columns) + "\n")


def tiresias(job_csv, out_csv, header):
    """Tiresias' log.py:_Log.job_complete writes one row per finished job into job.csv:
    time,job_id,num_gpu,submit_time,start_time,end_time,executed_time,JCT,duration,pending_time,
    preempt[,resume],promote (resume only with --scheme=count)."""
    rows = []
    with open(job_csv) as f:
        for d in csv.DictReader(f):
            arrival, start, end = int(d["submit_time"]), int(d["start_time"]), int(d["end_time"])
            jct = int(d["JCT"])
            if jct != end - arrival:
                raise SystemExit("convert: job %s: JCT %d != end - submit" % (d["job_id"], jct))
            rows.append({
                "job_id": int(d["job_id"]),
                "arrival_s": arrival,
                "start_s": start,
                "end_s": end,
                "jct_s": jct,
                "gpus": int(d["num_gpu"]),
                "duration_s": int(d["duration"]),
                "pending_s": int(d["pending_time"]),
                "preemptions": int(d["preempt"]),
                "promotions": int(d["promote"]),
            })
    rows.sort(key=lambda r: r["job_id"])
    write(out_csv, header, ["job_id", "arrival_s", "start_s", "end_s", "jct_s", "gpus",
                            "duration_s", "pending_s", "preemptions", "promotions"], rows)


LOG_LINE = re.compile(r"^scheduler:\w+ \[([0-9.eE+-]+)\] (.*)$")
SCHEDULED = re.compile(r"\[Micro-task scheduled\]\tJob ID: (\d+)\tWorker type: (\w+)\t"
                       r"Worker ID\(s\): ([\d,]+)\t")
SUCCEEDED = re.compile(r"\[Job succeeded\]\tJob ID: (\d+)\t")
JCT_LINE = re.compile(r"^Job (\d+): ([0-9.]+)$")


def gavel(trace, log, out_csv, header):
    """Gavel's scheduler.py logs one '[Micro-task scheduled]' line per job per round
    (Scheduler.simulate -> _print_schedule_summary), '[Job succeeded]' when a job's last step is
    done (_done_callback -> _remove_job), and get_average_jct prints 'Job N: JCT' (%.3f)."""
    arrivals, gpus, types, steps = [], [], [], []
    with open(trace) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            types.append(fields[0])
            steps.append(int(fields[5]))
            gpus.append(int(fields[6]))
            arrivals.append(float(fields[9]))
    rounds_at = []            # distinct timestamps of scheduling passes, in order
    scheduled = {}            # round index -> {job_id: (worker_type, worker_ids)}
    done_round = {}           # job_id -> index of the last round it was scheduled in
    jct = {}
    with open(log, errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = JCT_LINE.match(line)
            if m:
                jct[int(m.group(1))] = m.group(2)
                continue
            m = LOG_LINE.match(line)
            if not m:
                continue
            t, msg = m.group(1), m.group(2)
            s = SCHEDULED.search(msg)
            if s:
                if not rounds_at or rounds_at[-1] != t:
                    rounds_at.append(t)
                    scheduled[len(rounds_at) - 1] = {}
                scheduled[len(rounds_at) - 1][int(s.group(1))] = (s.group(2), s.group(3))
                continue
            s = SUCCEEDED.search(msg)
            if s:
                done_round[int(s.group(1))] = len(rounds_at) - 1
    n = len(arrivals)
    if sorted(jct) != list(range(n)):
        raise SystemExit("convert: %s: %d JCTs printed for %d jobs" % (log, len(jct), n))
    rows = []
    for j in range(n):
        ran = [r for r in range(len(rounds_at)) if j in scheduled[r]]
        if not ran:
            raise SystemExit("convert: job %d never scheduled" % j)
        last = done_round[j]
        # A preemption: the job ran in round r, is still unfinished, and is not scheduled in r+1.
        preempt = sum(1 for r in ran if r < last and j not in scheduled.get(r + 1, {}))
        moves = sum(1 for r in ran if r + 1 in scheduled and j in scheduled[r + 1]
                    and scheduled[r + 1][j] != scheduled[r][j])
        wtypes = sorted(set(scheduled[r][j][0] for r in ran))
        start = float(rounds_at[ran[0]])
        rows.append({
            "job_id": j,
            "arrival_s": fmt(arrivals[j]),
            "start_s": fmt(start),
            "end_s": fmt(arrivals[j] + float(jct[j])),
            "jct_s": jct[j],
            "gpus": gpus[j],
            "rounds": len(ran),
            "preemptions": preempt,
            "moves": moves,
            "worker_types": ";".join(wtypes),
            "total_steps": steps[j],
            "job_type": '"%s"' % types[j],
        })
    write(out_csv, header, ["job_id", "arrival_s", "start_s", "end_s", "jct_s", "gpus", "rounds",
                            "preemptions", "moves", "worker_types", "total_steps", "job_type"],
          rows)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "tiresias":
        tiresias(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "gavel":
        gavel(*sys.argv[2:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
