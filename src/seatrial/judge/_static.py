"""The bundled static embedding model: a vector per token, a sentence is their mean.

A model2vec-style distillation of all-MiniLM-L6-v2 (``judge/model/``, made by
``scripts/make_static_model.py``). It needs numpy, tokenizers and safetensors, never torch,
and embeds tens of thousands of sentences a second on one CPU core.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from seatrial.errors import SeatrialError
from seatrial.judge._embedding import STATIC_MODEL, Vectors, unit_rows

MODEL_DIR = Path(__file__).resolve().parent / "model"
"""Where the bundled model's files are."""


class StaticEmbedder:
    """Embeds texts with a static (per-token) model folder: model.safetensors,
    tokenizer.json, config.json."""

    def __init__(self, folder: Path = MODEL_DIR, name: str = STATIC_MODEL) -> None:
        self.name = name
        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            weights = load_file(str(folder / "model.safetensors"))
            self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        # tokenizers raises plain Exception for a bad file, hence the broad clause.
        except (OSError, SafetensorError, Exception) as exc:
            raise SeatrialError(
                f"cannot load the static embedding model in {folder}: {exc}; reinstall "
                "seatrial, or rebuild it with scripts/make_static_model.py"
            ) from exc
        # float16 on disk keeps the package small; sums are done in float32.
        self._table = weights["embeddings"].astype(np.float32)
        self._max_tokens = int(config.get("max_length") or 512)
        unk = self._tokenizer.token_to_id("[UNK]")
        self._unknown = -1 if unk is None else unk

    @property
    def dims(self) -> int:
        """Length of each vector."""
        return int(self._table.shape[1])

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Mean of the texts' token vectors, at unit length (zeros for a text with no token)."""
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        encodings = self._tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        for row, encoding in enumerate(encodings):
            # Unknown tokens carry no meaning of their own, as in model2vec.
            ids = [i for i in encoding.ids[: self._max_tokens] if i != self._unknown]
            if ids:
                out[row] = self._table[ids].mean(axis=0)
        return unit_rows(out)
