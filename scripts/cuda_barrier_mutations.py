#!/usr/bin/env python3
"""How many of the CUDA kernels' barriers the emulation tests would miss.

Removes each barrier of runtime/src/backends/cuda/kernels/*.cuh in turn (each `__syncthreads();`
and `cluster_sync();` outside comments), rebuilds encrt_cuda_emulation_tests and runs the test files
whose kernels include that header, directly or through another kernel header, under each of the
emulator's schedules (tests/cuda_emulation/warp_emulation.h: ENCRT_EMULATION_SCHEDULE) and under
`cycle`, the default the suite runs with. A barrier whose removal every run survives is either
redundant or untested: read it.

With --race-check it builds them with clang 14 under ThreadSanitizer instead, where the emulator's
race check (tests/cuda_emulation/race_check.h) reports an access that no barrier orders with
another thread's write, whatever the schedule: each mutation runs once, and a barrier whose removal
no race report and no failed test shows is redundant by the barriers that remain.

It works on a git worktree of HEAD in a temporary folder (the checkout is never touched), built
without the CUDA backend (the emulation tests need only the toolkit's headers), one barrier at a
time; about a minute a barrier on 2 cores.

  python3 scripts/cuda_barrier_mutations.py [--race-check] [FILE:LINE ...]   (default: every barrier)
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

SCHEDULES = ["alternating", "first_ahead", "last_ahead", "cycle"]
BARRIER = re.compile(r"(?<![\w:])(__syncthreads|cluster_sync)\(\);")


def kernel_includes(path, kernels):
    """The kernel headers that `path` includes directly."""
    found = set()
    for m in re.finditer(r'#include\s+"([^"]+)"', open(path, encoding="utf-8").read()):
        p = os.path.join(kernels, os.path.basename(m.group(1)))
        if os.path.exists(p):
            found.add(p)
    return found


def closure(path, kernels):
    seen, pending = set(), [path]
    while pending:
        for q in kernel_includes(pending.pop(), kernels):
            if q not in seen:
                seen.add(q)
                pending.append(q)
    return seen


def barrier_sites(kernels):
    sites = []
    for f in sorted(glob.glob(os.path.join(kernels, "*.cuh"))):
        for i, line in enumerate(open(f, encoding="utf-8").read().split("\n")):
            code = line.split("//")[0]
            # (cluster.cuh's own definition calls the emulator's cluster_sync: not a barrier site)
            if BARRIER.search(code) and "emulation::" not in code:
                sites.append((f, i))
    return sites


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kw)


def main():
    args = sys.argv[1:]
    race_check = "--race-check" in args
    only = set(a for a in args if a != "--race-check")
    top = run(["git", "rev-parse", "--show-toplevel"]).stdout.strip()
    tree = tempfile.mkdtemp(prefix="encrt-barriers-")
    if run(["git", "-C", top, "worktree", "add", "--detach", tree, "HEAD"]).returncode != 0:
        sys.exit("git worktree add failed")
    try:
        build = os.path.join(tree, "build")
        options = ["-DENCRT_WITH_CUDA=OFF", "-DENCRT_WITH_XNNPACK=OFF", "-DENCRT_BUILD_BENCHMARKS=OFF",
                   "-DENCRT_PYTHON=/nonexistent"]
        env = dict(os.environ)
        if race_check:
            options += ["-DENCRT_SANITIZE_THREAD=ON", "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -g1", "-DCMAKE_C_FLAGS_RELEASE=-O1 -g1"]
            env.update(CC="clang-14", CXX="clang++-14")
        configure = run(["cmake", "-S", tree, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"] + options, env=env)
        if configure.returncode != 0:
            sys.exit("cmake failed:\n" + configure.stdout[-2000:] + configure.stderr[-2000:])
        first = run(["cmake", "--build", build, "--target", "encrt_cuda_emulation_tests"])
        if first.returncode != 0:
            sys.exit("the emulation tests do not build here (no CUDA headers?):\n" + first.stdout[-2000:])
        kernels = os.path.join(tree, "runtime/src/backends/cuda/kernels")
        tests = {t: closure(t, kernels) for t in glob.glob(os.path.join(tree, "tests/cuda_emulation/*.cpp"))}
        binary = os.path.join(build, "bin/encrt_cuda_emulation_tests")
        missed = 0
        sites = [s for s in barrier_sites(kernels) if not only or f"{os.path.basename(s[0])}:{s[1] + 1}" in only]
        for f, i in sites:
            key = f"{os.path.basename(f)}:{i + 1}"
            affected = sorted(t for t, c in tests.items() if f in c)
            original = open(f, encoding="utf-8").read()
            lines = original.split("\n")
            removed = BARRIER.sub(";", lines[i], count=1)
            lines[i] = removed
            try:
                open(f, "w", encoding="utf-8").write("\n".join(lines))
                if not affected:
                    print(f"{key}: no test includes it", flush=True)
                    continue
                if run(["cmake", "--build", build, "--target", "encrt_cuda_emulation_tests"]).returncode != 0:
                    print(f"{key}: does not build without it", flush=True)
                    continue
                tags = ",".join("[#" + os.path.basename(t)[:-4] + "]" for t in affected)
                outcome = {}
                if race_check:
                    r = run([binary, "-#", tags, "-a"], env=dict(os.environ, TSAN_OPTIONS="halt_on_error=1"), timeout=3600)
                    reported = "ThreadSanitizer: data race" in r.stdout + r.stderr
                    outcome["race_check"] = "reported" if reported else "survived" if r.returncode == 0 else "caught"
                for s in [] if race_check else SCHEDULES:
                    r = run([binary, "-#", tags, "-a"], env=dict(os.environ, ENCRT_EMULATION_SCHEDULE=s), timeout=1800)
                    outcome[s] = "survived" if r.returncode == 0 else "caught"
                survived = all(v == "survived" for v in outcome.values())
                missed += survived
                print(f"{key}: {' '.join(f'{s}={v}' for s, v in outcome.items())}"
                      f"{'   <- every run survived: redundant or untested' if survived else ''}", flush=True)
            finally:
                open(f, "w", encoding="utf-8").write(original)
        print(f"{len(sites)} barriers, {len(sites) - missed} caught, {missed} survived every run")
    finally:
        run(["git", "-C", top, "worktree", "remove", "--force", tree])


if __name__ == "__main__":
    main()
