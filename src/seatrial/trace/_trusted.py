"""Building pydantic records from values the runner made itself, without validating them again.

Every attempt builds about twenty records (its spans and events, its trace, eight assertion
results, metrics, snapshot, the attempt itself). Validating values that Seatrial just computed
with the right types costs about 3 us a model, and pydantic's ``model_construct`` more (it
runs in Python field by field); :func:`trusted_model` sets what a validated instance holds in
about a third of that. Use it only where every value is known to have its field's type:
anything from a user, a plugin or a file goes through the model's own validation.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

M = TypeVar("M", bound=BaseModel)

_REQUIRED = object()
_IMMUTABLE = (str, int, float, bool, type(None), tuple, frozenset, bytes)


class _Template:
    """A model class's field defaults, computed once: plain ones copied, factories called."""

    __slots__ = ("factories", "keys", "names", "private", "size", "values")

    def __init__(self, cls: type[BaseModel]) -> None:
        self.values: dict[str, Any] = {}
        self.factories: list[tuple[str, Callable[[], Any]]] = []
        for name, info in cls.model_fields.items():
            if info.default_factory is not None:
                self.values[name] = _REQUIRED
                self.factories.append((name, info.default_factory))  # type: ignore[arg-type]
            elif info.default is PydanticUndefined:
                self.values[name] = _REQUIRED
            elif isinstance(info.default, _IMMUTABLE):
                self.values[name] = info.default
            else:
                # A mutable plain default: pydantic copies it for every instance, so do we.
                self.values[name] = _REQUIRED
                self.factories.append((name, functools.partial(copy.deepcopy, info.default)))
        self.private = dict(cls.__private_attributes__)
        self.size = len(self.values)
        self.keys = self.values.keys()
        self.names = set(self.values)


_templates: dict[type[BaseModel], _Template] = {}


def trusted_model(cls: type[M], fields: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``fields`` (already valid), defaults for the rest.

    ``fields`` becomes the instance's set fields, as if passed to the constructor; it must
    name every required field and nothing that is not a field. When it names every field, it
    becomes the instance's own ``__dict__``: pass a dict made for the call, never one that is
    used again.
    """
    template = _templates.get(cls)
    if template is None:
        template = _templates[cls] = _Template(cls)
    if len(fields) == template.size:
        # Every field given (the callers give them in order): nothing to fill. The count
        # alone says so, since a dict names each key once and ``fields`` names only fields;
        # comparing the key sets cost a third of the call.
        values = fields
        fields_set = template.names.copy()
    else:
        values = {**template.values, **fields}
        for name, factory in template.factories:
            if name not in fields:
                values[name] = factory()
        fields_set = set(fields)
    instance = _new(cls)
    _set_dict(instance, values)
    _set_fields_set(instance, fields_set)
    _set_extra(instance, None)
    _set_private(
        instance,
        {
            name: attr.get_default(call_default_factory=True)
            for name, attr in template.private.items()
        }
        if template.private
        else None,
    )
    return instance


_new = object.__new__
"""BaseModel defines no ``__new__``: object's, called directly, skips looking it up on the class."""

# The four slots pydantic keeps an instance's state in, set through their own descriptors:
# what ``object.__setattr__`` does, without looking each name up on every call.
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
