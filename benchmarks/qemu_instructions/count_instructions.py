#!/usr/bin/env python3
"""Guest instructions executed, from a qemu-user log written with -d in_asm,exec,nochain.

qemu logs each translated block once (in_asm: "IN: symbol" then one line per instruction) and
every execution of a block (exec: "Trace N: host [flags/guest pc/...]"; nochain makes every
execution of a block print one). The count is the sum, over the executions, of the executed
block's instruction count: exact for blocks that run to their end, which is all of them but a
block left by a signal. qemu's timings mean nothing; these counts do not depend on the host.

usage: count_instructions.py LOG [--by-symbol N]
  prints the total; with --by-symbol, the N symbols with the most instructions (code without a
  symbol, e.g. the C library's, is listed as "?").
"""
import collections
import re
import sys

EXEC = re.compile(r"^Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/")


def count(path):
    sizes, symbols = {}, {}
    per_symbol = collections.Counter()
    block, n, symbol = None, 0, "?"
    with open(path, errors="replace") as log:
        for line in log:
            if line.startswith("IN:"):
                block, n, symbol = None, 0, line[3:].strip() or "?"
            elif line.startswith("0x") and ":" in line[:24]:
                pc = int(line.split(":", 1)[0], 16)
                if block is None:
                    block = pc
                n += 1
                sizes[block] = n
                symbols[block] = symbol
            else:
                m = EXEC.match(line)
                if m:
                    block = None
                    pc = int(m.group(1), 16)
                    per_symbol[symbols.get(pc, "?")] += sizes.get(pc, 0)
    return per_symbol


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    per_symbol = count(sys.argv[1])
    print(sum(per_symbol.values()))
    if "--by-symbol" in sys.argv:
        top = int(sys.argv[sys.argv.index("--by-symbol") + 1])
        for symbol, n in per_symbol.most_common(top):
            print(f"{n:12d}  {symbol[:120]}")


if __name__ == "__main__":
    main()
