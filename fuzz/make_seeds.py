#!/usr/bin/env python3
"""Regenerates the seed corpora of the fuzz targets (fuzz/corpus/<target>/).

    python3 fuzz/make_seeds.py --encrt build/bin/encrt

Needs numpy (the reference .npy writer) and the encrt CLI (its converter writes the model seeds).
Every seed is small (the model files are a few KB: hidden 8, one layer, a vocabulary of 30), and
is either valid or malformed in one stated way, so that the fuzzers start from both sides of
each check. Files named regress-* are reproducers of fuzzing findings, written by hand in
regression_seeds() below from what the fuzzer found (their original crash inputs are larger);
this script keeps them too, and the files named found-* (inputs the fuzzers found that add coverage
beyond these seeds, chosen from a merged work corpus by scripts/fuzz.sh runs). Existing files
with other names are removed first.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "the", "a", "##s", "un", "##aff",
         "##able", "caf", "##\u00e9", "na\u00efve", "\u4f60", "\u597d", "!", ",", ".", "'", "x", "##x", "cat",
         "sat", "on", "mat", "[unused0]", "\u00fcber"]


def safetensors_bytes(tensors, metadata=None):
    """tensors: list of (name, dtype string, shape, raw little-endian bytes)."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    data = b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def f32(name, shape, seed):
    rng = np.random.default_rng(seed)
    values = (rng.standard_normal(shape) * 0.2).astype("<f4")
    return (name, "F32", shape, values.tobytes())


def bert_checkpoint(vocab=30, hidden=8, ffn=16, layers=1, max_pos=16, prefix="", classifier=0):
    tensors = []
    s = 0

    def add(name, shape):
        nonlocal s
        s += 1
        tensors.append(f32(prefix + name, shape, s))

    add("embeddings.word_embeddings.weight", (vocab, hidden))
    add("embeddings.position_embeddings.weight", (max_pos, hidden))
    add("embeddings.token_type_embeddings.weight", (2, hidden))
    add("embeddings.LayerNorm.weight", (hidden,))
    add("embeddings.LayerNorm.bias", (hidden,))
    for l in range(layers):
        p = "encoder.layer.%d." % l
        for proj in ("query", "key", "value"):
            add(p + "attention.self.%s.weight" % proj, (hidden, hidden))
            add(p + "attention.self.%s.bias" % proj, (hidden,))
        add(p + "attention.output.dense.weight", (hidden, hidden))
        add(p + "attention.output.dense.bias", (hidden,))
        add(p + "attention.output.LayerNorm.weight", (hidden,))
        add(p + "attention.output.LayerNorm.bias", (hidden,))
        add(p + "intermediate.dense.weight", (ffn, hidden))
        add(p + "intermediate.dense.bias", (ffn,))
        add(p + "output.dense.weight", (hidden, ffn))
        add(p + "output.dense.bias", (hidden,))
        add(p + "output.LayerNorm.weight", (hidden,))
        add(p + "output.LayerNorm.bias", (hidden,))
    add("pooler.dense.weight", (hidden, hidden))
    add("pooler.dense.bias", (hidden,))
    if classifier:
        tensors.append(f32("classifier.weight", (classifier, hidden), 99))
        tensors.append(f32("classifier.bias", (classifier,), 98))
    config = {"model_type": "bert", "vocab_size": vocab, "hidden_size": hidden, "num_hidden_layers": layers,
              "num_attention_heads": 2, "intermediate_size": ffn, "max_position_embeddings": max_pos,
              "type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12}
    if classifier:
        config["architectures"] = ["BertForSequenceClassification"]
        config["id2label"] = {str(i): "L%d" % i for i in range(classifier)}
    return config, tensors


def torch_checkpoint(vocab=30, d=8, ffn=16, layers=1, max_len=16, tagger=0):
    tensors = [f32("embedding.weight", (vocab, d), 1)]
    for l in range(layers):
        p = "transformer_encoder.layers.%d." % l
        for i, (name, shape) in enumerate([
                ("self_attn.in_proj_weight", (3 * d, d)), ("self_attn.in_proj_bias", (3 * d,)),
                ("self_attn.out_proj.weight", (d, d)), ("self_attn.out_proj.bias", (d,)),
                ("linear1.weight", (ffn, d)), ("linear1.bias", (ffn,)), ("linear2.weight", (d, ffn)),
                ("linear2.bias", (d,)), ("norm1.weight", (d,)), ("norm1.bias", (d,)), ("norm2.weight", (d,)),
                ("norm2.bias", (d,))]):
            tensors.append(f32(p + name, shape, 10 * l + i + 2))
    tensors.append(f32("transformer_encoder.norm.weight", (d,), 50))
    tensors.append(f32("transformer_encoder.norm.bias", (d,), 51))
    if tagger:
        tensors.append(f32("tag_classifier.weight", (tagger, d), 52))
        tensors.append(f32("tag_classifier.bias", (tagger,), 53))
    config = {"model_type": "torch_encoder", "vocab_size": vocab, "d_model": d, "nhead": 2, "num_layers": layers,
              "dim_feedforward": ffn, "max_len": max_len, "embedding_scale": True, "activation": "gelu",
              "norm_first": True}
    if tagger:
        config["id2label"] = {str(i): ["O", "B-PER", "I-PER"][i % 3] for i in range(tagger)}
    return config, tensors


def write(target, name, data):
    path = os.path.join(CORPUS, target, name)
    with open(path, "wb") as f:
        f.write(data)


def clean(target):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if not f.startswith(("regress-", "found-")):
            os.remove(os.path.join(d, f))


# ---- model: .encrt files written by the converter, and malformed ones.

def model_seeds(encrt):
    clean("model")
    with tempfile.TemporaryDirectory() as tmp:
        def convert(name, config, tensors, args, vocab=True):
            src = os.path.join(tmp, name)
            os.makedirs(src)
            with open(os.path.join(src, "config.json"), "w") as f:
                json.dump(config, f)
            with open(os.path.join(src, "model.safetensors"), "wb") as f:
                f.write(safetensors_bytes(tensors))
            if vocab:
                with open(os.path.join(src, "vocab.txt"), "w", encoding="utf-8") as f:
                    f.write("\n".join(VOCAB) + "\n")
            out = os.path.join(tmp, name + ".encrt")
            # Relative paths from inside tmp: the file's "source" metadata is then the same on every run.
            subprocess.run([os.path.abspath(encrt), "convert", name, "-o", name + ".encrt"] + args, check=True,
                           cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(out, "rb") as f:
                return f.read()

        bert, bert_t = bert_checkpoint()
        torch, torch_t = torch_checkpoint()
        seeds = {
            "bert_fp32.encrt": convert("bert_fp32", bert, bert_t, ["--dtype", "fp32"]),
            "bert_fp16_pooler.encrt": convert("bert_fp16", bert, bert_t, ["--dtype", "fp16", "--pooling", "pooler"]),
            "bert_int8.encrt": convert("bert_int8", bert, bert_t, ["--dtype", "int8", "--min-cosine", "0"]),
            "bert_int8_float_attention.encrt": convert("bert_int8_fa", bert, bert_t,
                                                       ["--dtype", "int8", "--attention", "float", "--min-cosine", "0"]),
            "torch_fp32_window.encrt": convert("torch_fp32", torch, torch_t, ["--dtype", "fp32", "--attention-window", "1"],
                                               vocab=False),
            "torch_int8_max.encrt": convert("torch_int8", torch, torch_t,
                                            ["--dtype", "int8", "--pooling", "max", "--min-cosine", "0"], vocab=False),
        }
        cls, cls_t = bert_checkpoint(classifier=3)
        seeds["bert_classifier_fp32.encrt"] = convert("bert_cls", cls, cls_t, ["--dtype", "fp32"])
        tag, tag_t = torch_checkpoint(tagger=3)
        seeds["torch_tagger_int8.encrt"] = convert("torch_tag", tag, tag_t, ["--dtype", "int8", "--min-cosine", "0"],
                                                   vocab=False)
    for name, data in seeds.items():
        write("model", name, data)
    base = seeds["bert_fp32.encrt"]
    write("model", "bad_truncated.encrt", base[: len(base) // 2])
    write("model", "bad_identifier.encrt", base[:4] + b"XXXX" + base[8:])
    write("model", "bad_empty.encrt", b"")
    write("model", "bad_tiny.encrt", base[:7])


# ---- tokenizer: option bytes + texts (fuzz/fuzz_tokenizer.cpp says what the bytes mean).

def tokenizer_seeds():
    clean("tokenizer")
    texts = [
        ("plain", "Hello, world! The cat sat on the mat."),
        ("accents", "Caf\u00e9 na\u00efve \u00fcber C\u0327a\u0300 \u00c5ngstr\u00f6m"),
        ("cjk", "\u4f60\u597d\u4e16\u754c hello\u4f60\u597d \u3053\u3093\u306b\u3061\u306f \ud55c\uad6d\uc5b4"),
        ("control", "tab\there\nnew\rline \x00 nul \x07 bell \u200b zero width \u00ad soft \ufeff bom"),
        ("specials", "[CLS] hello [SEP] world [MASK] [PAD] [UNK] [unused0]"),
        ("unaffable", "unaffable unaffables xxxx x ##x ## #"),
        ("emoji", "\U0001f600 \U0001f468\u200d\U0001f469\u200d\U0001f467 \u2764\ufe0f"),
        ("punct", "\u00bfQu\u00e9? \u00a1S\u00ed! \u201cquoted\u201d \u2014 dash \u2026 ellipsis $5.00 #tag @me"),
        ("long", " ".join(["hello world the cat"] * 40)),
        ("empty", ""),
        ("spaces", "   \u3000\u00a0  "),
    ]
    invalid = [("invalid_utf8", b"hello \xff\xfe world"), ("overlong", b"\xc0\xaf \xe0\x80\xaf"),
               ("surrogate", b"\xed\xa0\x80 x"), ("truncated_seq", b"caf\xc3"),
               ("too_big", b"\xf4\x90\x80\x80")]
    # byte 0: variant | mode << 2 | truncation << 4 | (truncation off) << 6; byte 1: max_length.
    n = 0
    for variant in range(4):
        for name, text in texts:
            data = text.encode("utf-8")
            write("tokenizer", "single_v%d_%s" % (variant, name), bytes([variant, 0]) + data)
            n += 1
    for name, data in invalid:
        write("tokenizer", "single_%s" % name, bytes([0, 16]) + data)
    for truncation in range(3):
        for max_length in (3, 5, 9):
            opts = bytes([1 << 2 | truncation << 4, max_length])
            write("tokenizer", "pair_t%d_m%d" % (truncation, max_length),
                  opts + "hello world the cat sat".encode() + b"\x00" + "\u4f60\u597d caf\u00e9 x".encode())
    write("tokenizer", "pair_untruncated_too_long", bytes([1 << 2 | 1 << 6, 6]) + b"hello world\x00the cat sat on")
    write("tokenizer", "pair_empty_first", bytes([1 << 2, 0]) + b"\x00hello")
    write("tokenizer", "batch_texts", bytes([2 << 2, 12]) + b"hello\x00the cat sat on the mat\x00\x00caf\xc3\xa9")
    write("tokenizer", "batch_pairs", bytes([3 << 2 | 2 << 4, 10]) + b"hello\x00world\x00the cat\x00sat on the mat")
    write("tokenizer", "batch_no_pad", bytes([3 | 2 << 2, 0]) + b"hello\x00the cat sat")
    write("tokenizer", "bad_negative_max_length", bytes([0, 255]) + b"hello")
    write("tokenizer", "bad_unknown_strategy", bytes([3 << 4, 8]) + b"hello world")


# ---- converter: option byte + config.json + NUL + model.safetensors.

def converter_seeds():
    clean("converter")

    def seed(name, options, config, image):
        text = config if isinstance(config, bytes) else json.dumps(config).encode()
        write("converter", name, bytes([options]) + text + b"\x00" + image)

    bert, bert_t = bert_checkpoint()
    torch, torch_t = torch_checkpoint()
    seed("bert_f32", 0, bert, safetensors_bytes(bert_t, {"format": "pt"}))
    seed("bert_prefixed_f16_pooler", 1 | 3 << 2, bert, safetensors_bytes(bert_checkpoint(prefix="bert.")[1]))
    seed("bert_i8_cls", 2 | 2 << 2, bert, safetensors_bytes(bert_t))
    seed("torch_f32", 0, torch, safetensors_bytes(torch_t))
    seed("torch_i8_max", 2 | 4 << 2, torch, safetensors_bytes(torch_t))
    cls, cls_t = bert_checkpoint(classifier=2)
    seed("bert_classifier_i8", 2, cls, safetensors_bytes(cls_t))
    seed("bert_classifier_head_none", 0x20, cls, safetensors_bytes(cls_t))
    tag, tag_t = torch_checkpoint(tagger=3)
    seed("torch_tagger_f16", 1, tag, safetensors_bytes(tag_t))
    # Other float dtypes for the same shapes.
    def retyped(tensors, dtype, np_type):
        out = []
        for name, _, shape, raw in tensors:
            values = np.frombuffer(raw, "<f4").astype(np_type)
            if dtype == "BF16":
                raw2 = (np.frombuffer(raw, "<u4") >> 16).astype("<u2").tobytes()
            else:
                raw2 = values.tobytes()
            out.append((name, dtype, shape, raw2))
        return out
    seed("torch_f16_weights", 0, torch, safetensors_bytes(retyped(torch_t, "F16", "<f2")))
    seed("torch_bf16_weights", 0, torch, safetensors_bytes(retyped(torch_t, "BF16", None)))
    seed("torch_f64_weights", 0, torch, safetensors_bytes(retyped(torch_t, "F64", "<f8")))
    # Malformed, one thing each.
    good = safetensors_bytes(torch_t)
    seed("bad_json", 0, b'{"model_type": "torch_encoder", "d_model": ', good)
    seed("bad_model_type", 0, dict(torch, model_type="gpt2"), good)
    seed("bad_unknown_key", 0, dict(torch, dropout_typo=0.1), good)
    seed("bad_float_int", 0, dict(torch, d_model=8.0), good)
    seed("bad_odd_d_model", 0, dict(torch, d_model=7), good)
    seed("bad_max_len_huge", 0, dict(torch, max_len=2147483647), good)  # once std::bad_alloc
    seed("bad_pooling_name", 6 << 2, torch, good)
    seed("bad_pooler_on_torch", 3 << 2, torch, good)
    seed("bad_shape_mismatch", 0, dict(torch, dim_feedforward=32), good)
    seed("bad_missing_tensor", 0, torch, safetensors_bytes(torch_t[:-3]))
    seed("bad_header_length", 0, torch, struct.pack("<Q", 1 << 40) + good[8:])
    seed("bad_header_not_json", 0, torch, struct.pack("<Q", 8) + b"not json" + good[8:])
    seed("bad_unknown_dtype", 0, torch, good.replace(b'"F32"', b'"F31"', 1))
    seed("bad_offsets", 0, torch, good.replace(b'"data_offsets":[0,', b'"data_offsets":[9999999,', 1))
    seed("bad_truncated_data", 0, torch, good[:-17])
    seed("bad_i64_tensor", 0, torch, safetensors_bytes([("embedding.weight", "I64", (30, 8), bytes(30 * 8 * 8))]
                                                        + torch_t[1:]))
    seed("bad_nan_weight", 0, torch, safetensors_bytes([("embedding.weight", "F32", (30, 8),
                                                         np.full((30, 8), np.nan, "<f4").tobytes())] + torch_t[1:]))
    write("converter", "bad_no_separator", bytes([0]) + json.dumps(torch).encode())
    seed("bad_empty_config", 0, b"", good)


# ---- npy: NumPy's own files and malformed ones.

def npy_bytes(array, version=None):
    import io
    buf = io.BytesIO()
    if version is None:
        np.save(buf, array)
    else:
        np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def npy_seeds():
    clean("npy")
    ids = np.arange(12, dtype="<i4").reshape(3, 4)
    seeds = {
        "i4_2d.npy": npy_bytes(ids),
        "i8_2d.npy": npy_bytes(ids.astype("<i8")),
        "bool_mask.npy": npy_bytes(ids % 2 == 0),
        "u1.npy": npy_bytes(ids.astype("u1")),
        "i1_negative.npy": npy_bytes((-ids).astype("i1")),
        "f4_3d.npy": npy_bytes(np.linspace(-1, 1, 24, dtype="<f4").reshape(2, 3, 4)),
        "f8_1d.npy": npy_bytes(np.array([1.5, -2.25, np.inf, np.nan, 1e300], dtype="<f8")),
        "f4_scalar.npy": npy_bytes(np.float32(3.5)),
        "f4_empty.npy": npy_bytes(np.zeros((0, 5), "<f4")),
        "i4_v2.npy": npy_bytes(ids, version=(2, 0)),
        "i4_v3.npy": npy_bytes(ids, version=(3, 0)),
        "f4_fortran.npy": npy_bytes(np.asfortranarray(np.ones((2, 3), "<f4"))),
        "i8_too_big_for_i4.npy": npy_bytes(np.array([1 << 40], dtype="<i8")),
        "f2_unsupported.npy": npy_bytes(np.ones(3, "<f2")),
        "big_endian_i4.npy": npy_bytes(ids.astype(">i4")),
    }
    good = seeds["i4_2d.npy"]
    seeds["bad_magic.npy"] = b"\x93NUMPX" + good[6:]
    seeds["bad_version.npy"] = good[:6] + b"\x09\x00" + good[8:]
    seeds["bad_truncated_header.npy"] = good[:40]
    seeds["bad_truncated_data.npy"] = good[:-5]
    seeds["bad_header_len.npy"] = good[:8] + b"\xff\xff" + good[10:]
    seeds["bad_negative_dim.npy"] = good.replace(b"(3, 4)", b"(3,-4)")
    seeds["bad_huge_shape.npy"] = good.replace(b"(3, 4)", b"(99999999999999999999, 99999999999, 4)")
    seeds["bad_overflow_shape.npy"] = good.replace(b"(3, 4)", b"(4294967296, 4294967296, 2)")
    seeds["bad_no_descr.npy"] = good.replace(b"'descr'", b"'dtype'")
    seeds["bad_shape_text.npy"] = good.replace(b"(3, 4)", b"(3, x)")
    for name, data in seeds.items():
        write("npy", name, data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encrt", default=os.path.join(HERE, "..", "build", "bin", "encrt"), help="the encrt CLI")
    args = ap.parse_args()
    if not os.path.exists(args.encrt):
        sys.exit("no encrt CLI at %s (build it, or pass --encrt)" % args.encrt)
    model_seeds(args.encrt)
    tokenizer_seeds()
    converter_seeds()
    npy_seeds()
    total = 0
    for target in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, target))
        size = sum(os.path.getsize(os.path.join(CORPUS, target, f)) for f in files)
        total += size
        print("%-10s %3d files %8d bytes" % (target, len(files), size))
    print("total %d bytes" % total)


if __name__ == "__main__":
    main()
