"""The table of assertion types: each name (and alias) with its level and parameter model.

Types arrive from *providers*, modules whose import registers them: the built-in types from
:data:`BUILT_IN_MODULE`, third-party types from the entry-point group :data:`PLUGIN_GROUP`.
Both are imported by name on the first question asked of the table, the way plugins always
were. That is what lets :mod:`seatrial.case` validate a suite against every built-in type
without importing :mod:`seatrial.assertion` (which imports :mod:`seatrial.case`): the
dependency runs through this table, never as an import between the two packages.
"""

from __future__ import annotations

import ast
import inspect
import logging
import textwrap
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from seatrial.record import Level

log = logging.getLogger(__name__)

BUILT_IN_MODULE = "seatrial.assertion"
"""The provider of the built-in types; importing it registers every one of them."""
PLUGIN_GROUP = "seatrial"
"""The entry-point group third-party packages register their assertion types from."""


class AssertionParams(BaseModel):
    """Base of every assertion's parameter model: unknown keys are errors.

    Each field is documented by the docstring under it; :func:`field_docs` reads them when the
    docs ask. (Pydantic's ``use_attribute_docstrings`` would read every model's source at
    import instead: ~70 ms of every run's start for text only the docs use.)
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


def field_docs(params: type[BaseModel]) -> dict[str, str]:
    """Each field of ``params`` and its description: ``Field(description=...)`` if given,
    else the docstring under the field in its class (or the base class that declares it).

    A field with neither is left out; so is every field when the source cannot be read.
    """
    docs: dict[str, str] = {}
    for cls in reversed(params.__mro__):
        if isinstance(cls, type) and issubclass(cls, BaseModel) and cls is not BaseModel:
            docs.update(_attribute_docstrings(cls))
    described = {
        name: field.description or docs.get(name, "") for name, field in params.model_fields.items()
    }
    return {name: text for name, text in described.items() if text}


def _attribute_docstrings(cls: type) -> dict[str, str]:
    try:
        source = textwrap.dedent(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = next((node for node in ast.parse(source).body if isinstance(node, ast.ClassDef)), None)
    if body is None:
        return {}
    docs: dict[str, str] = {}
    for node, following in zip(body.body, body.body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[node.target.id] = inspect.cleandoc(following.value.value)
    return docs


@dataclass(frozen=True)
class AssertionType:
    """A registered assertion type."""

    name: str
    level: Level
    params: type[AssertionParams]
    check: Callable[[Any, Any], Any]
    """``(params, AssertionContext) -> Check`` or an awaitable of one. Typed loosely because
    the context belongs to :mod:`seatrial.assertion`, which this table must not import."""
    failure_type: str
    aliases: tuple[str, ...] = ()
    doc: str = ""


_TYPES: dict[str, AssertionType] = {}
_ALIASES: dict[str, str] = {}
_providers_loaded = False
_loading = False
# Reentrant: a provider being imported may ask the table a question on the same thread.
_load_lock = threading.RLock()


def register(kind: AssertionType) -> None:
    """Add ``kind`` under its name and aliases; a later registration of a name replaces it."""
    _TYPES[kind.name] = kind
    for alias in kind.aliases:
        _ALIASES[alias] = kind.name


def _load_providers() -> None:
    global _providers_loaded, _loading
    if _providers_loaded:
        return
    # Other threads wait for the whole table: a question answered from half of it would call
    # a built-in type unknown.
    with _load_lock:
        if _providers_loaded or _loading:
            return  # loaded meanwhile, or asked again from inside a provider's import
        _loading = True
        try:
            import_module(BUILT_IN_MODULE)
            for entry in entry_points(group=PLUGIN_GROUP):
                try:
                    entry.load()
                except Exception as exc:  # a broken plugin must not break Seatrial
                    log.warning("seatrial plugin %r failed to load: %s", entry.name, exc)
            _providers_loaded = True
        finally:
            _loading = False


def lookup(name: str) -> AssertionType:
    """The assertion type registered as ``name`` or as an alias of it; KeyError if none."""
    _load_providers()
    canonical = _ALIASES.get(name, name)
    return _TYPES[canonical]


def known_types() -> list[str]:
    """Every registered type name, sorted (aliases not included)."""
    _load_providers()
    return sorted(_TYPES)


def aliases() -> dict[str, str]:
    """Alias -> canonical type name."""
    _load_providers()
    return dict(_ALIASES)
