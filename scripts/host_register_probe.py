#!/usr/bin/env python3
"""Why `weights=mapped` never returned on a discrete GPU: cudaHostRegister timed on its own.

On the H200 VM of two device runs, a session with `weights=mapped` spent its time in the kernel
(60 s of system time) and never finished; the cuda backend now refuses the option on discrete
GPUs. This probe (for scripts/device_check.sh, step `inspect`) registers, in a child process
each and under a time limit, 64 MiB of
  anonymous   memory (mmap MAP_PRIVATE | MAP_ANONYMOUS, written first),
  file-private a read-only MAP_PRIVATE mapping of FILE (how encrt maps a model), read first,
  file-shared  the same as MAP_SHARED,
with cudaHostRegisterMapped | cudaHostRegisterReadOnly through PyTorch's CUDA runtime binding,
and prints, per kind, the seconds it took and cudaHostRegister's return code, or "did not return
in N s" with the child's /proc wchan and the Movable zone's size (long-term pins of pages in
ZONE_MOVABLE must migrate them first, and the kernel retries a failing migration).

  python3 scripts/host_register_probe.py FILE [--limit SECONDS]
"""
import argparse
import mmap
import multiprocessing as mp
import os
import time

KINDS = ("anonymous", "file-private", "file-shared")
BYTES = 64 << 20
FLAGS = 0x02 | 0x08  # cudaHostRegisterMapped | cudaHostRegisterReadOnly


def register(kind, path, queue):
    import torch

    cudart = torch.cuda.cudart()
    torch.cuda.init()
    if kind == "anonymous":
        buf = mmap.mmap(-1, BYTES, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        buf.write(b"\1" * BYTES)
    else:
        fd = os.open(path, os.O_RDONLY)
        size = min(BYTES, os.fstat(fd).st_size) // mmap.PAGESIZE * mmap.PAGESIZE
        share = mmap.MAP_PRIVATE if kind == "file-private" else mmap.MAP_SHARED
        buf = mmap.mmap(fd, size, flags=share, prot=mmap.PROT_READ)
        sum(buf[i] for i in range(0, size, mmap.PAGESIZE))  # resident before the pin
    import numpy as np

    view = np.frombuffer(buf, dtype=np.uint8)  # a read-only mapping's address (ctypes wants it writable)
    address, length = view.ctypes.data, view.nbytes
    queue.put(("started", os.getpid()))
    start = time.perf_counter()
    rc = cudart.cudaHostRegister(address, length, FLAGS)
    took = time.perf_counter() - start
    code = int(rc.value) if hasattr(rc, "value") else int(rc)
    if code == 0:
        cudart.cudaHostUnregister(address)
    queue.put(("done", f"{took:.3f} s, cudaHostRegister returned {code} ({length >> 20} MiB)"))


def movable_zone():
    try:
        with open("/proc/zoneinfo") as f:
            text = f.read()
    except OSError:
        return "no /proc/zoneinfo"
    sizes = []
    for block in text.split("Node ")[1:]:
        head = block.split("\n", 1)[0]
        if "Movable" in head:
            for line in block.splitlines():
                if line.strip().startswith("present"):
                    sizes.append(int(line.split()[-1]) * mmap.PAGESIZE >> 20)
    return f"ZONE_MOVABLE present: {sum(sizes)} MiB" if sum(sizes) else "no ZONE_MOVABLE pages"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--limit", type=float, default=8.0)
    args = ap.parse_args()
    print(f"host_register_probe: {movable_zone()}")
    ctx = mp.get_context("spawn")
    for kind in KINDS:
        queue = ctx.Queue()
        child = ctx.Process(target=register, args=(kind, args.file, queue), daemon=True)
        child.start()
        pid, result = None, None
        deadline = time.time() + args.limit + 20  # the child's CUDA start-up first
        while time.time() < deadline and result is None:
            try:
                what, value = queue.get(timeout=0.5)
            except Exception:
                if not child.is_alive():
                    break
                continue
            if what == "started":
                pid = value
                deadline = time.time() + args.limit
            else:
                result = value
        if result is None:
            wchan = "?"
            if pid:
                try:
                    with open(f"/proc/{pid}/wchan") as f:
                        wchan = f.read().strip() or "0"
                except OSError:
                    pass
            result = f"did not return in {args.limit:g} s (wchan {wchan})" if pid else "the child failed before registering"
            child.kill()
        child.join(5)
        print(f"host_register_probe: {kind}: {result}")


if __name__ == "__main__":
    main()
