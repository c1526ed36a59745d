"""Loading from memory, checksum verification on load, the session's padding option, and the
ctypes mirrors of the C API's option structs (each must be as large as the library's own, which
its *_init function writes into struct_size)."""
import ctypes

import numpy as np
import pytest

import encrt
from encrt import _lib
from conftest import fixture_dir


@pytest.fixture(scope="module")
def bert_plain(convert):
    return convert(fixture_dir("bert_plain"), "--dtype", "fp32")


def fixture_inputs():
    return (np.load(fixture_dir("bert_plain", "ids.npy")), np.load(fixture_dir("bert_plain", "mask.npy")),
            np.load(fixture_dir("bert_plain", "token_type_ids.npy")))


@pytest.mark.parametrize("struct, init", [
    (_lib.SessionOptions, "encrt_session_options_init"), (_lib.LoadOptions, "encrt_load_options_init"),
    (_lib.RunInputs, "encrt_run_inputs_init"), (_lib.EncodeOptions, "encrt_encode_options_init"),
    (_lib.TokenArrays, "encrt_token_arrays_init"), (_lib.TaskOptions, "encrt_task_options_init")],
    ids=lambda x: x if isinstance(x, str) else x.__name__)
def test_struct_mirrors_match_the_library(struct, init):
    # Room past the mirror, so that a library struct larger than the mirror shows as a size
    # mismatch here instead of writing past it.
    block = (ctypes.c_ubyte * (ctypes.sizeof(struct) + 256))()
    getattr(_lib.lib, init)(ctypes.cast(block, ctypes.POINTER(struct)))
    assert ctypes.cast(block, ctypes.POINTER(ctypes.c_size_t))[0] == ctypes.sizeof(struct)


def test_from_bytes_gives_what_the_file_gives(bert_plain):
    ids, mask, types = fixture_inputs()
    data = open(bert_plain, "rb").read()
    with encrt.Model(bert_plain) as from_file, encrt.Model.from_bytes(data) as from_memory:
        assert from_memory.dims == from_file.dims and from_memory.dtype == from_file.dtype
        a = from_file.session(batch=ids.shape[0], seq=ids.shape[1]).run(ids, mask, types)
        b = from_memory.session(batch=ids.shape[0], seq=ids.shape[1]).run(ids, mask, types)
        assert np.array_equal(a["hidden"], b["hidden"]) and np.array_equal(a["pooled"], b["pooled"])
    # Any buffer type; the model keeps its own copy, so the caller's may change afterwards.
    buf = bytearray(data)
    with encrt.Model.from_bytes(memoryview(buf)) as model:
        buf[:] = bytes(len(buf))
        out = model.session(batch=ids.shape[0], seq=ids.shape[1]).run(ids, mask, types)
        assert np.array_equal(out["pooled"], a["pooled"])
    with pytest.raises(ValueError, match="no bytes"):
        encrt.Model.from_bytes(b"")
    with pytest.raises(encrt.InvalidModelError):
        encrt.Model.from_bytes(b"not a model" * 64)


def test_verify_catches_a_flipped_weight_byte(bert_plain, tmp_path):
    data = bytearray(open(bert_plain, "rb").read())
    with encrt.Model(bert_plain, verify=True) as model:
        assert model.dims.hidden_size == 32
    # A byte in the middle of the file lies inside weight data (the word embeddings and linears
    # are most of it); without verification the damaged file loads.
    data[len(data) // 2] ^= 0x10
    damaged = tmp_path / "damaged.encrt"
    damaged.write_bytes(bytes(data))
    encrt.Model(damaged).close()
    with pytest.raises(encrt.InvalidModelError, match="checksum"):
        encrt.Model(damaged, verify=True)
    with pytest.raises(encrt.InvalidModelError, match="checksum"):
        encrt.Model.from_bytes(bytes(data), verify=True)


def test_padding_option(bert_plain):
    ids, mask, types = fixture_inputs()
    assert not mask.all(), "the fixture batch has padding"
    real = mask.astype(bool)
    with encrt.Model(bert_plain) as model:
        runs = {p: model.session(batch=ids.shape[0], seq=ids.shape[1], padding=p).run(ids, mask, types)
                for p in ("auto", "packed", "padded")}
        for p in ("auto", "packed"):
            assert np.array_equal(runs[p]["hidden"][real], runs["padded"]["hidden"][real])
            assert np.array_equal(runs[p]["pooled"], runs["padded"]["pooled"])
            assert not runs[p]["hidden"][~real].any(), "packed runs give zeros at padding positions"
        with pytest.raises(ValueError, match="padding must be one of"):
            model.session(padding="ragged")
