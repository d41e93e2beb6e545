"""L1 assertions on what the agent left behind: its reported final state and workspace files."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from pydantic import Field, field_validator, model_validator

from seatrial.assertion._common import Names, as_text, mismatch, short
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.i18n import Message, phrased
from seatrial.i18n import gettext as _

_COMPARATORS = ("equals", "contains", "matches", "expected")
_MISSING = object()


def _relative_path(value: str) -> str:
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(
            _("`{path}` must be a path inside the workspace, without `..`").format(path=value)
        )
    return value


class SideEffectParams(AssertionParams):
    """Parameters of ``side_effect`` (alias ``final_state``)."""

    check: str | None = None
    """Dotted path into the agent's final state, e.g. ``order_created`` or ``orders.0.status``."""
    path: str | None = None
    """Same as ``check``."""
    file: str | None = None
    """A file in the workspace, relative to its root."""
    equals: Any = None
    """The value (or file text) must equal this."""
    contains: Any = None
    """Text must contain this substring; a list must hold this item; a mapping this key."""
    matches: str | None = None
    """A regular expression searched in the value's text."""
    expected: Any = None
    """A mapping: the value holds these keys and values (a list: one item does); anything else:
    the value equals it."""
    exists: bool | None = None
    """``true``: the value or file must exist; ``false``: it must not. Implied true otherwise."""

    @field_validator("file")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        return None if value is None else _relative_path(value)

    @model_validator(mode="after")
    def _consistent(self) -> SideEffectParams:
        targets = [key for key in ("check", "path", "file") if getattr(self, key) is not None]
        if len(targets) != 1:
            raise ValueError(_("name exactly one of `check`, `path` (final state) or `file`"))
        given = [key for key in _COMPARATORS if key in self.model_fields_set]
        if len(given) > 1:
            raise ValueError(
                _("use one of {comparisons}, not {given}").format(
                    comparisons=", ".join(_COMPARATORS), given=" and ".join(given)
                )
            )
        if given and self.exists is False:
            raise ValueError(_("`exists: false` cannot be combined with a comparison"))
        if self.matches is not None:
            try:
                re.compile(self.matches)
            except re.error as exc:
                raise ValueError(
                    _("invalid regular expression {pattern}: {error}").format(
                        pattern=repr(self.matches), error=exc
                    )
                ) from exc
        return self

    @property
    def comparator(self) -> str | None:
        """The comparison written, if any."""
        return next((key for key in _COMPARATORS if key in self.model_fields_set), None)


def _index(part: str, length: int) -> int | None:
    try:
        index = int(part)
    except ValueError:
        return None
    return index if -length <= index < length else None


def _walk(state: Any, dotted: str) -> Any:
    value = state
    for part in dotted.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and _index(part, len(value)) is not None:
            value = value[int(part)]
        else:
            return _MISSING
    return value


def _parse_file(path: Path, text: str) -> Any:
    if path.suffix in (".yaml", ".yml"):
        return yaml.safe_load(text)
    return json.loads(text)


Label = Message | str
"""What a reason names: a workspace file (a message) or a path into the final state (as
written, the same in every language)."""


def _compare(params: SideEffectParams, value: Any, label: Label) -> Check:
    comparator = params.comparator
    if comparator is None:
        return Check.passed(phrased("{label} exists", label=label))
    wanted = getattr(params, comparator)
    if comparator == "matches":
        if re.search(str(wanted), as_text(value)) is None:
            return Check.failed(
                phrased(
                    "{label} is {value}, which does not match /{pattern}/",
                    label=label,
                    value=short(value),
                    pattern=str(wanted),
                )
            )
        return Check.passed(
            phrased("{label} matches /{pattern}/", label=label, pattern=str(wanted))
        )
    if comparator == "contains":
        if isinstance(value, str):
            ok = as_text(wanted) in value
        elif isinstance(value, Mapping):
            ok = wanted in value
        elif isinstance(value, list):
            ok = any(mismatch(wanted, item, exact=True) is None for item in value)
        else:
            ok = False
        if not ok:
            return Check.failed(
                phrased(
                    "{label} is {value}, which does not contain {wanted}",
                    label=label,
                    value=short(value),
                    wanted=short(wanted),
                )
            )
        return Check.passed(phrased("{label} contains {wanted}", label=label, wanted=short(wanted)))
    if comparator == "expected" and isinstance(wanted, Mapping) and isinstance(value, list):
        if any(mismatch(wanted, item, exact=False) is None for item in value):
            return Check.passed(
                phrased("an item of {label} has {wanted}", label=label, wanted=short(wanted))
            )
        return Check.failed(
            phrased(
                "no item of {label} has {wanted} (found {value})",
                label=label,
                wanted=short(wanted),
                value=short(value),
            )
        )
    subset = comparator == "expected" and isinstance(wanted, Mapping)
    problem = mismatch(wanted, value, exact=not subset)
    if problem is not None:
        return Check.failed(phrased("{label}: {problem}", label=label, problem=problem))
    return Check.passed(phrased("{label} is as expected", label=label))


@assertion(
    "side_effect",
    level="L1",
    params=SideEffectParams,
    failure_type="side_effect_missing",
    aliases=("final_state",),
)
def side_effect(params: SideEffectParams, ctx: AssertionContext) -> Check:
    """The agent's final state (or a workspace file) holds the expected value."""
    if params.file is not None:
        return _file_effect(params, params.file, ctx)
    dotted = params.check if params.check is not None else str(params.path)
    if ctx.final_state is None:
        return Check.not_evaluated(
            phrased(
                "the agent reported no final state, so `{path}` cannot be checked "
                "(have the agent return `final_state`; see docs/agents.md)",
                path=dotted,
            )
        )
    label = f"final_state.{dotted}"
    value = _walk(ctx.final_state, dotted)
    if value is _MISSING:
        if params.exists is False:
            return Check.passed(phrased("{label} does not exist", label=label))
        keys = ", ".join(str(key) for key in ctx.final_state)
        return Check.failed(
            phrased(
                "{label} does not exist (final state keys: {keys})",
                label=label,
                keys=keys or phrased("none"),
            )
        )
    if params.exists is False:
        return Check.failed(
            phrased("{label} exists ({value}) but should not", label=label, value=short(value))
        )
    return _compare(params, value, label)


def _file_effect(params: SideEffectParams, file: str, ctx: AssertionContext) -> Check:
    if ctx.workspace is None:
        return Check.not_evaluated(
            phrased(
                "the attempt had no workspace, so file `{file}` cannot be checked "
                "(give the case a `fixture`)",
                file=file,
            )
        )
    root = ctx.workspace.resolve()
    path = (root / file).resolve()
    if not path.is_relative_to(root):
        return Check.failed(phrased("`{file}` points outside the workspace", file=file))
    label = phrased("file `{file}`", file=file)
    if not path.exists():
        if params.exists is False:
            return Check.passed(phrased("{label} does not exist", label=label))
        return Check.failed(phrased("{label} does not exist in the workspace", label=label))
    if params.exists is False:
        return Check.failed(phrased("{label} exists but should not", label=label))
    if params.comparator is None:
        return Check.passed(phrased("{label} exists", label=label))
    if path.is_dir():
        return Check.failed(phrased("{label} is a folder, not a file", label=label))
    text = path.read_text(encoding="utf-8", errors="replace")
    wanted = getattr(params, params.comparator)
    value: Any = text
    if params.comparator in ("equals", "expected") and isinstance(wanted, Mapping | list):
        try:
            value = _parse_file(path, text)
        except (ValueError, yaml.YAMLError) as exc:
            return Check.failed(
                phrased("{label} is not valid JSON/YAML: {error}", label=label, error=str(exc))
            )
    return _compare(params, value, label)


class ExpectedFilesParams(AssertionParams):
    """Parameters of ``expected_files``."""

    expected: Names = Field(min_length=1)
    """Workspace paths (relative; glob patterns such as ``docs/*.md`` allowed) that must exist
    when the attempt ends."""

    @field_validator("expected")
    @classmethod
    def _inside(cls, value: list[str]) -> list[str]:
        return [_relative_path(item) for item in value]


@assertion(
    "expected_files", level="L1", params=ExpectedFilesParams, failure_type="side_effect_missing"
)
def expected_files(params: ExpectedFilesParams, ctx: AssertionContext) -> Check:
    """Every expected path exists in the workspace when the attempt ends."""
    if ctx.workspace is None:
        return Check.not_evaluated(
            phrased(
                "the attempt had no workspace, so expected files cannot be checked "
                "(give the case a `fixture`)"
            )
        )
    missing = []
    for pattern in params.expected:
        if any(char in pattern for char in "*?["):
            found = next(iter(ctx.workspace.glob(pattern)), None) is not None
        else:
            found = (ctx.workspace / pattern).exists()
        if not found:
            missing.append(pattern)
    if missing:
        return Check.failed(
            phrased("missing from the workspace: {paths}", paths=", ".join(missing))
        )
    if len(params.expected) == 1:
        return Check.passed(phrased("the expected file exists"))
    return Check.passed(phrased("all {count} expected files exist", count=len(params.expected)))
