#!/usr/bin/env python3
"""Writes the part of Gavel's physical_cluster_throughputs.json that the physical_cluster traces
use when jobs run alone: for each worker type (k80, p100, v100) and each (job type, scale factor)
of the traces, the "null" (solo) entry only. The file is 1.2 MB; this subset is 12 kB and gives
salus-sim's --throughputs the same iteration times (tests/data/peers/gavel/inputs/README.md).

  gavel_solo_throughputs.py THROUGHPUTS_JSON OUT_JSON TRACE [TRACE ...]
"""
import json
import sys


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    full = json.load(open(argv[1]))
    need = set()
    for path in argv[3:]:
        for n, line in enumerate(open(path), 1):
            cells = line.rstrip("\n").split("\t")
            if len(cells) < 7:
                print(f"{path}:{n}: expected Gavel's tab-separated columns", file=sys.stderr)
                return 2
            need.add(str((cells[0], int(cells[6]))))
    out = {}
    for worker in ("k80", "p100", "v100"):
        out[worker] = {k: {"null": full[worker][k]["null"]} for k in sorted(need) if k in full[worker]}
    with open(argv[2], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
