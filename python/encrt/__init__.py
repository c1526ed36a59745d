"""encrt: Transformer encoder inference (BERT/MiniLM, nn.TransformerEncoder) from Python.

    import encrt
    with encrt.Model("minilm.encrt") as model:
        embeddings = model.encode(["A man is eating food.", "A man is eating bread."])  # float32 [2, 384]
        tokens = model.tokenize(["A man is eating food."])                           # int32 [1, seq] arrays
        out = model.session(batch=2, seq=16).run(tokens["input_ids"], tokens["attention_mask"])
        out["hidden"], out["pooled"]                                                  # [1, seq, 384], [1, 384]

The package calls libencrt's C API through ctypes; errors are EncrtError subclasses carrying the
library's own message."""
from ._lib import version
from .errors import (EncrtError, EncrtIOError, EncrtMemoryError, InternalError, InvalidArgumentError,
                     InvalidModelError, UnsupportedError)
from .model import HeadInfo, Model, ModelDims
from .session import Session
from .tokenizer import Tokenizer

__version__ = "0.1.0"
__all__ = ["Model", "ModelDims", "HeadInfo", "Session", "Tokenizer", "version", "EncrtError", "InvalidArgumentError",
           "EncrtIOError", "InvalidModelError", "UnsupportedError", "EncrtMemoryError", "InternalError"]
