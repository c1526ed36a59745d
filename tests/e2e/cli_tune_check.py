#!/usr/bin/env python3
"""`encrt tune` through the CLI: the bert_plain fixture converted to int8, tuned on the cpu backend
(--json): every trial of the backend's table is there with an outcome, refusals carry their
message, every measured trial agrees with the defaults, and the options it prints create a session
(`encrt bench --backend-options ...` runs); --max-seconds stops before the next candidate; the text
output names the best options; bad arguments
and a model that is not there fail with their exit codes (usage 2, error 1).
  cli_tune_check.py --encrt build/bin/encrt [--tmp DIR]
Needs only Python's standard library."""
import argparse
import json
import os
import tempfile

from cli_support import FIXTURE, expect, run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--encrt", required=True)
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args()
    tmp = args.tmp or tempfile.mkdtemp(prefix="encrt_tune_")
    os.makedirs(tmp, exist_ok=True)
    encrt = args.encrt
    model = os.path.join(tmp, "bert_plain.int8.encrt")
    rc, out, err = run([encrt, "convert", FIXTURE, "-o", model, "--dtype", "int8", "--quiet"])
    expect(rc == 0, f"convert failed ({rc}): {err}")

    shape = ["--batch", "2", "--seq", "16", "--iters", "2", "--rounds", "1"]
    rc, out, err = run([encrt, "tune", model, "--backend", "cpu", *shape, "--json"])
    expect(rc == 0, f"tune --json: exit {rc}: {err}")
    d = json.loads(out.strip().splitlines()[-1])
    expect(d["backend"] == "cpu" and d["clock"] == "wall", f"backend and clock: {d}")
    expect("thread" in d["backend_summary"], f"the cpu backend's summary (kernels, threads): {d['backend_summary']}")
    options = {t["option"] for t in d["trials"]}
    for expected in ("int8_route=widened", "int8_route=signed", "int8_linears=f16"):
        expect(expected in options, f"trial {expected} missing: {sorted(options)}")
    expect(any(o.startswith("isa=") for o in options), f"no kernel level tried: {sorted(options)}")
    for t in d["trials"]:
        expect(t["outcome"] in ("taken", "not faster", "refused", "differs"), f"outcome: {t}")
        if t["outcome"] == "refused":
            expect(t["detail"], f"a refusal without its message: {t}")
        else:
            expect(t["min_cosine"] >= 0.99, f"a kernel level or route that disagrees with the defaults: {t}")
        if t["outcome"] in ("taken", "not faster"):
            expect(t["ms"] > 0 and t["best_ms"] > 0, f"unmeasured: {t}")
    expect(d["default_ms"] > 0 and d["tuned_ms"] > 0, f"final times: {d}")
    expect(d["stopped_before"] == "", f"no time budget, yet stopped: {d['stopped_before']}")

    # --max-seconds: a budget spent before the first candidate ends with none tried, says which it
    # stopped before, and still gives the defaults' options and time.
    rc, out, err = run([encrt, "tune", model, "--backend", "cpu", *shape, "--max-seconds", "0.000001", "--json"])
    expect(rc == 0, f"tune --max-seconds: exit {rc}: {err}")
    b = json.loads(out.strip().splitlines()[-1])
    expect(b["trials"] == [] and b["stopped_before"] == d["trials"][0]["option"] and b["default_ms"] > 0,
           f"--max-seconds 0.000001: {b}")
    rc, out, err = run([encrt, "tune", model, "--backend", "cpu", *shape, "--max-seconds", "0.000001"])
    expect(rc == 0 and "stopped " in out, f"--max-seconds, text: exit {rc}: {out}{err}")
    rc, out, err = run([encrt, "tune", model, "--max-seconds", "-1"])
    expect(rc == 1 and "max_seconds" in err, f"--max-seconds -1: exit {rc}: {err}")

    bench = [encrt, "bench", model, "--backend", "cpu", "--batch", "2", "--seq", "16", "--iters", "1", "--warmup", "0"]
    if d["options"]:
        bench += ["--backend-options", d["options"]]
    rc, out, err = run(bench)
    expect(rc == 0, f"the tuned options do not create a session: {d['options']}: {err}")

    # --backend-options @FILE: tune --json's result as it printed it, or NAME=VALUE items.
    saved = os.path.join(tmp, "tuned.json")
    with open(saved, "w") as f:
        f.write(json.dumps(dict(d, options="isa=scalar")) + "\n")  # (a level every CPU has, shown by bench)
    at = [encrt, "bench", model, "--backend", "cpu", "--batch", "2", "--seq", "16", "--iters", "1", "--warmup", "0",
          "--json"]
    kernels = lambda text: json.loads(text.strip().splitlines()[-1])["kernels"]
    rc, out, err = run(at + ["--backend-options", "@" + saved])
    expect(rc == 0 and kernels(out).startswith("isa=scalar "), f"@tuned.json: exit {rc}: {out}{err}")
    listed = os.path.join(tmp, "options.txt")
    with open(listed, "w") as f:
        f.write("int8_route=widened\n  isa=scalar\n")
    rc, out, err = run(at + ["--backend-options", "@" + listed])
    expect(rc == 0 and kernels(out).startswith("isa=scalar "), f"@options.txt: exit {rc}: {out}{err}")
    with open(listed, "w") as f:
        f.write("no_such=1\n")
    rc, out, err = run(at + ["--backend-options", "@" + listed])
    expect(rc == 1 and "no_such" in err, f"@options.txt with an unknown option: exit {rc}: {err}")
    rc, out, err = run(at + ["--backend-options", "@" + os.path.join(tmp, "missing.txt")])
    expect(rc == 1 and "cannot read" in err, f"@missing.txt: exit {rc}: {err}")

    rc, out, err = run([encrt, "tune", model, "--backend", "cpu", *shape])
    expect(rc == 0 and "best " in out and "time " in out and "summary " in out, f"text output: exit {rc}: {out}{err}")

    rc, out, err = run([encrt, "tune", model, "--iters", "0"])
    expect(rc == 1 and "iters" in err, f"--iters 0: exit {rc}: {err}")
    rc, out, err = run([encrt, "tune"])
    expect(rc == 2, f"no model: exit {rc}")
    rc, out, err = run([encrt, "tune", os.path.join(tmp, "missing.encrt")])
    expect(rc == 1, f"a missing model: exit {rc}")
    rc, out, err = run([encrt, "tune", model, "--backend", "cpu", "--backend-options", "no_such=1", *shape])
    expect(rc == 1 and "no_such" in err, f"an unknown option: exit {rc}: {err}")
    print("cli tune: ok")


if __name__ == "__main__":
    main()
