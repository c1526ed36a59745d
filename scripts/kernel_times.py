#!/usr/bin/env python3
"""Per-kernel GPU times of one command under Nsight Compute (ncu), summed by kernel name.

  python3 scripts/kernel_times.py [--launch-count N] [--csv-out FILE] -- COMMAND...

Runs COMMAND under `ncu --metrics gpu__time_duration.sum` with the clocks and caches left as they
are (--clock-control none, --cache-control none: METHOD.md of the device tool asks for the
former; warm caches are what a run of the model sees), each kernel replayed alone, then prints
one row per kernel name: calls, total and mean µs, and the share of the total. What it measures
is each kernel's own duration, without the gaps between kernels that a graph replay still has;
`encrt bench --backend cuda` gives the whole run. Run it on `encrt bench ... --no-graphs --iters 1
--warmup 0` for one forward pass (scripts/device_check.sh does). Exit 2 when ncu is missing or
gives no kernel.
"""
import argparse
import csv
import glob
import io
import re
import shutil
import subprocess
import sys
from collections import defaultdict

UNITS = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6}


def short_name(name):
    """`void ns::kernel<int, 4>(Args)` -> `ns::kernel<int, 4>`; cuBLAS's long names are cut at 90."""
    name = re.sub(r"^void ", "", name.strip())
    depth = 0
    for i, ch in enumerate(name):
        if ch in "<[":
            depth += 1
        elif ch in ">]":
            depth -= 1
        elif ch == "(" and depth == 0:
            name = name[:i]
            break
    return name if len(name) <= 90 else name[:87] + "..."


def parse(text):
    """Rows of ncu's raw CSV page as (kernel name, µs)."""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    if not lines:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header = rows[0]
    try:
        name_col = header.index("Kernel Name")
        time_col = header.index("gpu__time_duration.sum")
    except ValueError:
        return []
    body = rows[1:]
    scale = 1e-3  # ncu's default unit for the duration is the nanosecond
    if body and body[0][name_col] == "":  # the units row
        scale = UNITS.get(body[0][time_col].strip(), scale)
        body = body[1:]
    out = []
    for r in body:
        if len(r) <= max(name_col, time_col):
            continue
        try:
            value = float(r[time_col].replace(",", ""))
        except ValueError:
            continue
        out.append((r[name_col], value * scale))
    return out


def summarize(kernels):
    by_name = defaultdict(lambda: [0, 0.0])
    for name, us in kernels:
        entry = by_name[short_name(name)]
        entry[0] += 1
        entry[1] += us
    total = sum(us for _, us in kernels)
    lines = [f"{len(kernels)} kernels, {total:.1f} us in all (each kernel's own duration, replayed alone)",
             f"{'calls':>5} {'total us':>9} {'mean us':>8} {'share':>6}  kernel"]
    for name, (calls, us) in sorted(by_name.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"{calls:5d} {us:9.1f} {us / calls:8.2f} {100 * us / total:5.1f}%  {name}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--launch-count", type=int, default=400, help="kernels profiled at most")
    ap.add_argument("--csv-out", help="also write ncu's CSV here")
    ap.add_argument("--from-csv", help="summarize a saved CSV instead of running ncu")
    ap.add_argument("command", nargs="*")
    args = ap.parse_args()
    if args.from_csv:
        text = open(args.from_csv).read()
    else:
        ncu = shutil.which("ncu")
        for pattern in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu"):
            if not ncu:
                hits = sorted(glob.glob(pattern))
                ncu = hits[-1] if hits else None
        if not ncu or not args.command:
            print("kernel_times: " + ("no ncu on the PATH" if not ncu else "no command given"))
            return 2
        cmd = [ncu, "--csv", "--page", "raw", "--metrics", "gpu__time_duration.sum", "--clock-control", "none",
               "--cache-control", "none", "--launch-count", str(args.launch_count)] + args.command
        done = subprocess.run(cmd, capture_output=True, text=True)
        text = done.stdout
        if args.csv_out:
            with open(args.csv_out, "w") as f:
                f.write(text)
                f.write(done.stderr)
    kernels = parse(text)
    if not kernels:
        print("kernel_times: ncu gave no kernel; its last lines:")
        print("\n".join(text.splitlines()[-8:]))
        return 2
    print(summarize(kernels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
