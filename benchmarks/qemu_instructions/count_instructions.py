#!/usr/bin/env python3
"""Guest instructions executed, from a qemu-user log written with -d in_asm,exec,nochain.

qemu logs each translated block once (in_asm: "IN: symbol" then one line per instruction) and
every execution of a block (exec: "Trace N: host [flags/guest pc/...]"; nochain makes every
execution of a block print one). The count is the sum, over the executions, of the executed
block's instruction count: exact for blocks that run to their end, which is all of them but a
block left by a signal. qemu's timings mean nothing; these counts do not depend on the host.

usage: count_instructions.py LOG [--by-symbol N] [--by-block SYMBOL N]
  prints the total; with --by-symbol, the N symbols with the most instructions (code without a
  symbol, e.g. the C library's, is listed as "?"); with --by-block, the N translated blocks of the
  symbols whose name contains SYMBOL with the most instructions, each with its offset from the
  lowest such block, its share and its instructions as qemu disassembled them (where a loop
  spills, which epilogue line costs what).
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


def count_blocks(path, symbol_part):
    """Per translated block of the symbols whose name contains symbol_part: {pc: (instructions
    executed, block size, disassembly lines)}."""
    sizes, symbols, text = {}, {}, {}
    executed = collections.Counter()
    block, symbol = None, "?"
    with open(path, errors="replace") as log:
        for line in log:
            if line.startswith("IN:"):
                block, symbol = None, line[3:].strip() or "?"
            elif line.startswith("0x") and ":" in line[:24]:
                pc = int(line.split(":", 1)[0], 16)
                if block is None:
                    block = pc
                    text[block] = []
                sizes[block] = sizes.get(block, 0) + 1
                symbols[block] = symbol
                text[block].append(line.strip())
            else:
                m = EXEC.match(line)
                if m:
                    block = None
                    pc = int(m.group(1), 16)
                    if symbol_part in symbols.get(pc, ""):
                        executed[pc] += sizes.get(pc, 0)
    return {pc: (n, sizes[pc], text[pc]) for pc, n in executed.items()}


def print_blocks(blocks, top):
    total = sum(n for n, _, _ in blocks.values()) or 1
    base = min(blocks) if blocks else 0
    print(f"{total} instructions in {len(blocks)} blocks")
    for pc, (n, size, lines) in sorted(blocks.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{n:12d} {n / total:6.1%}  +{pc - base:#x}, {size} instructions:")
        for line in lines:
            print("      " + line[:100])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if "--by-block" in sys.argv:
        i = sys.argv.index("--by-block")
        print_blocks(count_blocks(sys.argv[1], sys.argv[i + 1]), int(sys.argv[i + 2]))
        return
    per_symbol = count(sys.argv[1])
    print(sum(per_symbol.values()))
    if "--by-symbol" in sys.argv:
        top = int(sys.argv[sys.argv.index("--by-symbol") + 1])
        for symbol, n in per_symbol.most_common(top):
            print(f"{n:12d}  {symbol[:120]}")


if __name__ == "__main__":
    main()
