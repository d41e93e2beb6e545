"""A plugin's parameter fields are documented by the docstrings under them, read on demand."""

from __future__ import annotations

import pytest
from pydantic import Field, ValidationError

from seatrial.registry import AssertionParams, field_docs


class BaseParams(AssertionParams):
    target: str = "final_response"
    """Which text to check."""


class PluginParams(BaseParams):
    value: str
    """The text to find.

    Case matters.
    """
    limit: int = Field(3, description="Given in the field itself.")
    undocumented: bool = False


def test_field_docs_reads_each_fields_docstring_including_inherited_ones() -> None:
    assert field_docs(PluginParams) == {
        "target": "Which text to check.",
        "value": "The text to find.\n\nCase matters.",
        "limit": "Given in the field itself.",
    }


def test_parameter_models_still_refuse_unknown_keys() -> None:
    assert PluginParams(value="x").limit == 3
    with pytest.raises(ValidationError, match="colour"):
        PluginParams(value="x", colour="red")  # type: ignore[call-arg]
