"""Session.run on numpy arrays against the PyTorch outputs of the golden fixtures
(tests/fixtures/README.md): the converted checkpoints run through the installed package must give
what the C++ suites check, within the same bars (fp32: 1e-4 x RMS on real tokens)."""
import json

import numpy as np
import pytest

import encrt
from conftest import fixture_dir


def load(*parts):
    return np.load(fixture_dir(*parts))


def rel_err(got, want):
    return float(np.abs(got - want).max() / np.sqrt(np.mean(want.astype(np.float64) ** 2)))


@pytest.fixture(scope="module")
def bert_plain(convert):
    return convert(fixture_dir("bert_plain"), "--dtype", "fp32")


def test_bert_plain_hidden_pooled_and_attention(bert_plain):
    ids, mask = load("bert_plain", "ids.npy"), load("bert_plain", "mask.npy")
    types = load("bert_plain", "token_type_ids.npy")
    real = mask.astype(bool)
    with encrt.Model(bert_plain) as model:
        assert model.dims == encrt.ModelDims(vocab_size=120, hidden_size=32, num_heads=4, num_layers=2, max_seq_len=40)
        assert model.dtype == "fp32" and model.head is None and model.labels == []
        session = model.session(batch=ids.shape[0], seq=ids.shape[1], attention_layer=1)
        assert session.output_names == ("hidden", "pooled", "attention")
        out = session.run(ids, attention_mask=mask, token_type_ids=types)  # int64 arrays: converted once
        assert out["hidden"].dtype == np.float32 and out["hidden"].shape == ids.shape + (32,)
        assert rel_err(out["hidden"][real], load("bert_plain", "hidden.npy")[real]) <= 1e-4
        assert rel_err(out["pooled"], load("bert_plain", "pooled.npy")) <= 1e-4
        probs = load("bert_plain", "attention_probs_layer1.npy")  # [b, heads, query, key]: real query rows
        got = out["attention"].transpose(0, 2, 1, 3)[real]
        assert rel_err(got, probs.transpose(0, 2, 1, 3)[real]) <= 1e-4
        # The same run from int32 C-contiguous arrays (passed without a copy) and from
        # non-contiguous views (converted) gives the same bits; so does asking for one output.
        same = session.run(ids.astype(np.int32), mask.astype(np.int32), types.astype(np.int32))
        assert np.array_equal(same["hidden"], out["hidden"])
        wide = np.zeros((ids.shape[0], 2 * ids.shape[1]), dtype=np.int64)
        wide[:, ::2] = ids
        strided = session.run(wide[:, ::2], np.asfortranarray(mask), types, outputs=["pooled"])
        assert list(strided) == ["pooled"] and np.array_equal(strided["pooled"], out["pooled"])
        # A smaller run in the same session: the rows that have padding, cut to the longest of them.
        rows = np.flatnonzero(~real.all(axis=1))
        seq = int(mask[rows].sum(axis=1).max())
        assert seq < ids.shape[1]
        small = session.run(ids[rows, :seq], mask[rows, :seq], types[rows, :seq])
        assert small["hidden"].shape == (len(rows), seq, 32)
        cut = real[rows, :seq]
        assert rel_err(small["hidden"][cut], out["hidden"][rows, :seq][cut]) <= 1e-5


def test_fp16_and_int8_models_report_their_dtype(convert):
    for dtype, metadata in (("fp16", "f16"), ("int8", "i8")):
        with encrt.Model(convert(fixture_dir("bert_plain"), "--dtype", dtype)) as model:
            assert model.dtype == dtype
            assert model.metadata("weight_type") == metadata
            assert model.metadata("no such entry") is None


@pytest.mark.parametrize("case", json.load(open(fixture_dir("manifest.json")))["src_mask_fixtures"][0]["src_masks"],
                         ids=lambda c: c["name"])
def test_src_masks_as_nn_transformer_encoder(convert, case):
    ids, mask = load("torch_src_masks", "ids.npy"), load("torch_src_masks", "mask.npy")
    src = load("torch_src_masks", case["src_mask"])
    assert src.dtype == (np.bool_ if case["kind"] == "bool" else np.float32)
    with encrt.Model(convert(fixture_dir("torch_src_masks"), "--dtype", "fp32")) as model:
        session = model.session(batch=ids.shape[0], seq=ids.shape[1], src_mask=True)
        hidden = session.run(ids, mask, src_mask=src)["hidden"]
    real = mask.astype(bool)
    assert rel_err(hidden[real], load("torch_src_masks", case["hidden"])[real]) <= 1e-4


HEADS = json.load(open(fixture_dir("heads", "manifest.json")))["fixtures"]


@pytest.mark.parametrize("fx", HEADS, ids=lambda f: f["name"])
def test_head_outputs_as_transformers(convert, fx):
    name = fx["name"]
    ids, mask = load("heads", name, "ids.npy"), load("heads", name, "mask.npy")
    types = load("heads", name, "token_type_ids.npy") if fx["has_token_types"] else None
    with encrt.Model(convert(fixture_dir("heads", name), "--dtype", "fp32")) as model:
        assert model.head.kind == fx["kind"]
        assert model.head.score_function == fx["score_function"]
        assert len(model.labels) == fx["num_labels"]
        config = json.load(open(fixture_dir("heads", name, "config.json")))
        if "id2label" in config:
            assert model.labels == [config["id2label"][str(i)] for i in range(fx["num_labels"])]
        session = model.session(batch=ids.shape[0], seq=ids.shape[1])
        assert ("labels" in session.output_names) == fx["single_label"]
        out = session.run(ids, mask, types)
    # Sequence heads: every row; token heads: real tokens only.
    rows = slice(None) if fx["kind"] == "sequence_classification" else mask.astype(bool)
    want = load("heads", name, "logits.npy")[rows]
    assert rel_err(out["logits"][rows], want) <= 1e-4
    assert np.abs(out["scores"][rows] - load("heads", name, "scores.npy")[rows]).max() <= 1e-5
    if fx["single_label"]:
        assert out["labels"].dtype == np.int32
        top2 = np.sort(want, axis=-1)[..., -2:]
        clear = (top2[..., 1] - top2[..., 0]) > 2e-4 * np.sqrt(np.mean(want ** 2))
        assert np.array_equal(out["labels"][rows][clear], load("heads", name, "labels.npy")[rows][clear])


def test_sessions_on_threads_give_the_single_threaded_bits(bert_plain):
    """ctypes releases the GIL in every call: four sessions of one model run at once on four
    threads, and one session is reused from different threads in turn; every result equals the
    single-threaded run's bits."""
    import threading
    ids, mask = load("bert_plain", "ids.npy"), load("bert_plain", "mask.npy")
    with encrt.Model(bert_plain) as model:
        want = model.session(batch=3, seq=12).run(ids, mask)["hidden"]
        sessions = [model.session(batch=3, seq=12) for _ in range(4)]
        results, errors = {}, []

        def work(i):
            try:
                results[i] = [sessions[i].run(ids, mask)["hidden"] for _ in range(20)]
            except Exception as e:  # reported below: an exception in a thread would pass silently
                errors.append(e)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert all(np.array_equal(h, want) for runs in results.values() for h in runs)
        shared = sessions[0]
        for _ in range(3):
            t = threading.Thread(target=lambda: results.__setitem__("turn", shared.run(ids, mask)["hidden"]))
            t.start()
            t.join()
            assert np.array_equal(results["turn"], want)


def test_tune_returns_options_a_session_takes(convert):
    int8 = convert(fixture_dir("bert_plain"), "--dtype", "int8")
    with encrt.Model(int8, backend="cpu") as model:
        tuned = model.tune(batch=2, seq=16)
        assert isinstance(tuned.options, dict)
        assert tuned.default_ms > 0 and tuned.tuned_ms > 0
        session = model.session(batch=2, seq=16, backend_options=tuned.options)
        ids = np.full((2, 16), 5, dtype=np.int32)
        assert session.run(ids)["hidden"].shape == (2, 16, 32)
        # A start of the caller's own: kept or replaced, never dropped.
        assert "int8_linears" in model.tune(batch=1, seq=8, backend_options={"int8_linears": "f16"}).options
        with pytest.raises(encrt.InvalidArgumentError):
            model.tune(batch=1, seq=8, backend_options={"no_such_option": "1"})
        with pytest.raises(encrt.InvalidArgumentError):
            model.tune(batch=0, seq=8)
