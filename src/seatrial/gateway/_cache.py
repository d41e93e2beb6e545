"""The response cache: answers keyed on the normalised request, in SQLite or in memory.

On by default for judge and generation calls (the same question gets the same verdict, and
is paid for once); off for the agent's own calls, because a cached answer hides the very
variance that repeats exist to measure. When agent calls are cached, each repeat still gets
its own entries unless ``share_across_repeats`` says otherwise.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from seatrial.errors import GatewayError
from seatrial.gateway._config import CacheConfig
from seatrial.gateway._prepared import PreparedRequest, canonical_json, prepared
from seatrial.gateway._types import ChatRequest, ChatResponse

DEFAULT_CACHE_PATH = Path(".seatrial") / "cache.db"
"""Where a project keeps its cache file, relative to the project folder."""

CACHE_FORMAT_VERSION = 1
"""Part of every key: a change in what a key covers starts a fresh cache."""


class ResponseCache:
    """Chat answers by request key, in a SQLite file or (without ``path``) in memory.

    A file cache is shared by the processes of one project (SQLite's WAL journal lets them
    read while one writes). Close it when done, or use it as a context manager.
    """

    def __init__(self, config: CacheConfig, path: Path | None = None) -> None:
        """Open the cache at ``path`` (``DEFAULT_CACHE_PATH`` under a project); else in memory."""
        self._config = config
        self._path = path
        self._lock = threading.Lock()
        try:
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                ":memory:" if path is None else str(path), check_same_thread=False, timeout=10
            )
            try:
                if path is not None:
                    self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS responses ("
                    "key TEXT PRIMARY KEY, response TEXT NOT NULL, created_at REAL NOT NULL)"
                )
                self._db.commit()
            except sqlite3.Error:
                self._db.close()
                raise
        except (OSError, sqlite3.Error) as exc:
            raise self._error("open", exc) from exc

    @property
    def path(self) -> Path | None:
        """The cache file; None for an in-memory cache."""
        return self._path

    def enabled_for(self, request: ChatRequest) -> bool:
        """Whether this request may use the cache: its own ``cache`` flag, else its purpose's."""
        if request.cache is not None:
            return request.cache
        return bool(getattr(self._config, request.purpose))

    def key(self, request: ChatRequest | PreparedRequest, model: str) -> str:
        """The cache key of ``request`` sent to the configured ``model``.

        Agent calls are also keyed on their run, case and attempt, so repeats never share an
        answer unless ``share_across_repeats`` is set.
        """
        call = prepared(request)
        material: dict[str, Any] = {
            "v": CACHE_FORMAT_VERSION,
            "request": call.normal_for(model),
        }
        asked = call.request
        if asked.purpose == "agent" and not self._config.share_across_repeats:
            material["scope"] = [asked.run_id, asked.case_id, asked.attempt]
        return hashlib.sha256(canonical_json(material).encode("utf-8")).hexdigest()

    def get(self, key: str) -> ChatResponse | None:
        """The cached answer, marked ``cached`` and costing nothing; None when absent or stale."""
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT response, created_at FROM responses WHERE key = ?", (key,)
                ).fetchone()
        except sqlite3.Error as exc:
            raise self._error("read", exc) from exc
        if row is None:
            return None
        text, created_at = row
        if self._config.ttl_s is not None and time.time() - created_at > self._config.ttl_s:
            return None
        try:
            response = ChatResponse.model_validate_json(text)
        except ValidationError:
            # Written by another Seatrial version: a miss, and the next put replaces it.
            return None
        return response.model_copy(update={"cached": True, "cost_usd": 0.0})

    def put(self, key: str, response: ChatResponse) -> None:
        """Keep an answer; answers shaped by an injected fault are never kept."""
        if response.fault is not None:
            return
        stored = response.model_copy(update={"cached": False})
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR REPLACE INTO responses VALUES (?, ?, ?)",
                    (key, stored.model_dump_json(), time.time()),
                )
                self._db.commit()
        except sqlite3.Error as exc:
            raise self._error("write", exc) from exc

    def clear(self) -> int:
        """Forget every answer; returns how many there were."""
        try:
            with self._lock:
                removed = self._db.execute("DELETE FROM responses").rowcount
                self._db.commit()
        except sqlite3.Error as exc:
            raise self._error("clear", exc) from exc
        return int(removed)

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _error(self, action: str, exc: BaseException) -> GatewayError:
        where = "in memory" if self._path is None else f"at {self._path}"
        return GatewayError(
            f"cannot {action} the response cache {where}: {exc}; delete the cache file to "
            "start afresh, or turn the cache off under gateway.cache in seatrial.yaml"
        )
