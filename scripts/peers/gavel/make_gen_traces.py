#!/usr/bin/python3
"""Writes small generated traces in Gavel's trace format, for more varied runs of Gavel's own
simulator than its 8 physical_cluster traces (scripts/peers/run-gavel.sh, GEN=1).

  make_gen_traces.py THROUGHPUTS_JSON OUT_DIR [SEED ...]

THROUGHPUTS_JSON  Gavel's scheduler/physical_cluster_throughputs.json (commit c4fa40097339), or
                  any file with its "v100"/"p100"/"k80" -> "('type', scale)" -> "null" entries
OUT_DIR           receives gen<SEED>.trace for each seed (default seeds 1..12)

Each trace has Gavel's 10 tab-separated columns (scheduler/utils.py:parse_trace): job_type,
command, working_directory, num_steps_arg, needs_data_dir, total_steps, scale_factor,
priority_weight (1), SLO (-1.000000), arrival_time (integer seconds), the first four as Gavel's
scheduler/job_table.py writes them. Per seed (random.Random(seed), so the output depends only on
the seed and the throughputs):

- 20 to 60 jobs (triangular, mode 20, which keeps the 12 default traces under 60 kB);
- scale factors 1, 2, 4, 8 with weights 0.4, 0.25, 0.2, 0.15; the job type drawn uniformly among
  the (type, scale) keys whose solo ("null") throughput is > 0 on v100 and that have an entry on
  p100 and k80 (a k80 entry may be 0: ResNet-50 with batch size 128 cannot run there);
- arrivals: a batch at time 0 (0 to n/4 jobs), bursts (1 to 3 of 3 to 8 jobs within two minutes,
  some in the same second), the rest a Poisson stream, all within 2 to 5 hours;
- total_steps from a solo duration on one V100 (of the job's scale) drawn log-uniformly from 3 min
  to 8 h, times that throughput; distinct within a trace (no two jobs are identical, so no exact
  ties between jobs in either simulator).

Standard library only; the rows are sorted by arrival (stable), as Gavel's traces are.
"""
import json
import math
import os
import random
import sys

# scheduler/job_table.py at c4fa40097339: (command, working_directory, num_steps_arg,
# needs_data_dir) per family; '%d' is the batch size.
FAMILIES = {
    "ResNet-18": ("python3 main.py --data_dir=%%s/cifar10 --batch_size %d",
                  "image_classification/cifar10", "--num_steps", 1),
    "ResNet-50": ("python3 main.py -j 8 -a resnet50 -b %d %%s/imagenet/",
                  "image_classification/imagenet", "--num_minibatches", 1),
    "Transformer": ("python3 train.py -data %%s/translation/multi30k.atok.low.pt -batch_size %d "
                    "-proj_share_weight", "translation", "-step", 1),
    "LM": ("python main.py --cuda --data %%s/wikitext2 --batch_size %d", "language_modeling",
           "--steps", 1),
    "Recommendation": ("python3 train.py --data_dir %%s/ml-20m/pro_sg/ --batch_size %d",
                       "recommendation", "-n", 1),
    "A3C": ("python3 main.py --env PongDeterministic-v4 --workers 4 --amsgrad True", "rl",
            "--max-steps", 0),
    "CycleGAN": ("python3 cyclegan.py --dataset_path %s/monet2photo --decay_epoch 0", "cyclegan",
                 "--n_steps", 1),
}
SCALES = (1, 2, 4, 8)
SCALE_WEIGHTS = (0.40, 0.25, 0.20, 0.15)
MIN_DURATION_S, MAX_DURATION_S = 180.0, 8 * 3600.0


def columns(job_type):
    """Gavel's command, working_directory, num_steps_arg, needs_data_dir for a job type."""
    family, _, rest = job_type.partition(" (batch size ")
    command, workdir, steps_arg, needs_data = FAMILIES[family]
    if rest:
        command = command % int(rest.rstrip(")"))
    return command, workdir, steps_arg, needs_data


def keys_by_scale(throughputs):
    out = {s: [] for s in SCALES}
    for key, entry in throughputs["v100"].items():
        if not key.startswith("('") or "null" not in entry:
            continue  # packed pairs have other keys
        job_type, scale = key[2:-1].rsplit("', ", 1)
        scale = int(scale)
        if scale not in out or job_type.partition(" (")[0] not in FAMILIES:
            continue
        if entry["null"] <= 0:
            continue
        if any(key not in throughputs[w] or "null" not in throughputs[w][key]
               for w in ("p100", "k80")):
            continue
        out[scale].append((job_type, entry["null"]))
    for scale in out:
        out[scale].sort()
    return out


def arrivals(rng, n):
    span = rng.uniform(2 * 3600, 5 * 3600)
    at = [0.0] * rng.randint(0, n // 4)
    for _ in range(rng.randint(1, 3)):
        if len(at) >= n:
            break
        t0 = rng.uniform(0, span - 120)
        for _ in range(min(rng.randint(3, 8), n - len(at))):
            # about a third in the burst's first second
            at.append(t0 if rng.random() < 0.33 else t0 + rng.uniform(0, 120))
    rest = n - len(at)
    if rest:
        rate = rest / span
        t = 0.0
        for _ in range(rest):
            t += rng.expovariate(rate)
            at.append(min(t, span))
    return sorted(int(t) for t in at)


def trace(seed, keys):
    rng = random.Random(seed)
    n = int(round(rng.triangular(20, 60, 20)))
    times = arrivals(rng, n)
    used_steps = set()
    rows = []
    for t in times:
        scale = rng.choices(SCALES, SCALE_WEIGHTS)[0]
        job_type, v100 = rng.choice(keys[scale])
        duration = math.exp(rng.uniform(math.log(MIN_DURATION_S), math.log(MAX_DURATION_S)))
        steps = max(1, int(round(duration * v100)))
        while steps in used_steps:
            steps += 1
        used_steps.add(steps)
        command, workdir, steps_arg, needs_data = columns(job_type)
        rows.append("\t".join([job_type, command, workdir, steps_arg, str(needs_data), str(steps),
                               str(scale), "1", "-1.000000", str(t)]))
    return "\n".join(rows) + "\n"


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        keys = keys_by_scale(json.load(f))
    for scale, k in keys.items():
        if not k:
            print(f"make_gen_traces: no job type of scale {scale} in {argv[1]}", file=sys.stderr)
            return 2
    seeds = [int(s) for s in argv[3:]] or list(range(1, 13))
    os.makedirs(argv[2], exist_ok=True)
    for seed in seeds:
        with open(os.path.join(argv[2], f"gen{seed}.trace"), "w") as f:
            f.write(trace(seed, keys))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
