"""Registries that several packages read without importing each other.

The assertion type registry lives here, below both :mod:`seatrial.case` (which checks a
suite's assertions against it while loading) and :mod:`seatrial.assertion` (whose modules
register the built-in types into it). It imports nothing of Seatrial but the record models,
so neither of those packages has to import the other to agree on what a type is.

Plugins keep writing ``from seatrial.assertion import assertion, AssertionParams``; the names
here are the same objects.
"""

from seatrial.registry._assertions import (
    BUILT_IN_MODULE,
    PLUGIN_GROUP,
    AssertionParams,
    AssertionType,
    aliases,
    field_docs,
    known_types,
    lookup,
    register,
)

__all__ = [
    "BUILT_IN_MODULE",
    "PLUGIN_GROUP",
    "AssertionParams",
    "AssertionType",
    "aliases",
    "field_docs",
    "known_types",
    "lookup",
    "register",
]
