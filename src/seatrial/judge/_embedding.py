"""Text embeddings for L3 checks: which model, a cache, and cosine similarity.

Three kinds of model answer :func:`embedder_for`:

* ``static`` (the default): the static model bundled in the package, offline, no torch;
* ``all-MiniLM-L6-v2``: the full transformer, with the ``seatrial[semantic]`` extra;
* any other name: an embeddings model configured in the gateway, once a gateway has been
  made available with :func:`use_gateway_embeddings`.

Every vector is float32 and of unit length, so cosine similarity is a dot product.
"""

from __future__ import annotations

import contextvars
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


def embedder_for(model: str | None = None) -> Embedder:
    """The embedder named ``model`` (None: the bundled static model), loaded once."""
    name = model or STATIC_MODEL
    if name in (STATIC_MODEL, SEMANTIC_MODEL):
        with _loaded_lock:
            if name not in _loaded:
                _loaded[name] = _load_builtin(name)
            return _loaded[name]
    factory = _gateway_factory.get()
    if factory is None:
        raise UnknownEmbeddingModel(
            f"no embedding model {name!r}: use {STATIC_MODEL!r} (the bundled default), "
            f'{SEMANTIC_MODEL!r} (pip install "seatrial[semantic]"), or a model configured '
            "in the gateway with `embedding: true` while the run uses the gateway"
        )
    return factory(name)


def _load_builtin(name: str) -> Embedder:
    # Imported here: the static model reads 8 MB, the semantic one imports torch.
    if name == STATIC_MODEL:
        from seatrial.judge._static import StaticEmbedder

        return StaticEmbedder()
    from seatrial.judge._semantic import semantic_embedder

    return semantic_embedder()


def similarities(
    reference: str, texts: Sequence[str], model: str | None = None, cache: EmbeddingCache = CACHE
) -> list[float]:
    """Cosine similarity of each text to ``reference`` with the named model (cached).

    An empty text is similar to nothing (0). A non-empty text the model cannot represent
    raises :class:`UnembeddableText`: a 0 there would be a verdict on the model, not the text.
    """
    embedder = embedder_for(model)
    vectors = cache.embed(embedder, [reference, *texts])
    for text, vector in zip([reference, *texts], vectors, strict=True):
        if text.strip() and not vector.any():
            raise UnembeddableText(
                f"the embedding model {embedder.name!r} knows none of the words in "
                f"{text[:40]!r}; use an embeddings model that covers the language (see "
                "docs/judge.md)"
            )
    scores = vectors[1:] @ vectors[0]
    return [float(np.clip(score, -1.0, 1.0)) for score in scores]


def similarity(a: str, b: str, model: str | None = None) -> float:
    """Cosine similarity of two texts with the named model (default: the bundled one)."""
    return similarities(a, [b], model)[0]
