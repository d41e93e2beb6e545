"""L1 ``tool_params``: the arguments a tool was called with."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import model_validator

from seatrial.assertion._common import as_text, each, mismatch, schema_error, short, with_called
from seatrial.assertion._registry import AssertionContext, AssertionParams, Check, assertion
from seatrial.i18n import Message, phrased
from seatrial.i18n import gettext as _
from seatrial.trace import TraceToolCall


class ToolParamsParams(AssertionParams):
    """Parameters of ``tool_params``."""

    tool: str
    """The tool whose arguments are checked."""
    expected: Any = None
    """What the arguments must look like (see ``match``)."""
    params: Any = None
    """Another name for ``expected``, the one one-case ``case:`` files use; write one of the two."""
    match: Literal["subset", "exact", "regex", "json_schema"] = "subset"
    """``subset``: the written keys have these values, others may exist; ``exact``: the
    arguments equal ``expected``; ``regex``: each written value is a regular expression searched
    in the argument's text; ``json_schema``: ``expected`` is a JSON schema the arguments meet."""
    call: Literal["any", "all", "first", "last"] = "any"
    """Which calls of the tool must match: any one of them, all, the first, or the last."""

    @model_validator(mode="after")
    def _consistent(self) -> ToolParamsParams:
        if (self.expected is None) == (self.params is None):
            raise ValueError(_("write the expected arguments as `expected` (or `params`), once"))
        wanted = self.wanted
        if self.match in ("subset", "regex") and not isinstance(wanted, Mapping):
            raise ValueError(
                _("match `{match}` needs a mapping of argument names to values").format(
                    match=self.match
                )
            )
        if self.match == "regex":
            _compile_all(wanted)
        if self.match == "json_schema":
            if not isinstance(wanted, Mapping):
                raise ValueError(_("match `json_schema` needs a JSON schema (a mapping)"))
            import jsonschema  # only a suite that gives a schema pays for it
            from jsonschema.exceptions import SchemaError

            try:
                jsonschema.validators.validator_for(wanted).check_schema(dict(wanted))
            except SchemaError as exc:
                raise ValueError(
                    _("invalid JSON schema: {error}").format(error=exc.message)
                ) from exc
        return self

    @property
    def wanted(self) -> Any:
        """The expected arguments, whichever key held them."""
        return self.expected if self.expected is not None else self.params


def _compile_all(patterns: Mapping[str, Any], where: str = "") -> None:
    for key, pattern in patterns.items():
        path = f"{where}.{key}" if where else str(key)
        if isinstance(pattern, Mapping):
            _compile_all(pattern, path)
            continue
        if not isinstance(pattern, str):
            raise ValueError(
                _("`{path}`: match `regex` needs a string pattern, got {value}").format(
                    path=path, value=repr(pattern)
                )
            )
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(
                _("`{path}`: invalid regular expression {pattern}: {error}").format(
                    path=path, pattern=repr(pattern), error=exc
                )
            ) from exc


def _regex_mismatch(patterns: Mapping[str, Any], actual: Any, where: str = "") -> Message | None:
    if not isinstance(actual, Mapping):
        return phrased(
            "{where}: expected an object, got {actual}",
            where=phrased("`{where}`", where=where or "arguments"),
            actual=short(actual),
        )
    for key, pattern in patterns.items():
        path = f"{where}.{key}" if where else str(key)
        if key not in actual:
            return phrased("`{where}` is missing", where=path)
        if isinstance(pattern, Mapping):
            found = _regex_mismatch(pattern, actual[key], path)
            if found:
                return found
        elif re.search(pattern, as_text(actual[key])) is None:
            return phrased(
                "`{where}`: {actual} does not match /{pattern}/",
                where=path,
                actual=short(actual[key]),
                pattern=pattern,
            )
    return None


def _schema_mismatch(schema: Mapping[str, Any], actual: Any) -> Message | None:
    import jsonschema  # only a check with a schema pays for it

    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(actual))
    if error is None:
        return None
    return schema_error(error.message, ".".join(str(part) for part in error.absolute_path))


def argument_mismatch(params: ToolParamsParams, arguments: Any) -> Message | None:
    """Why ``arguments`` do not meet ``params`` (None when they do)."""
    match, wanted = params.match, params.wanted
    if match == "regex":
        return _regex_mismatch(wanted, arguments)
    if match == "json_schema":
        return _schema_mismatch(wanted, arguments)
    return mismatch(wanted, arguments, exact=match == "exact")


@assertion("tool_params", level="L1", params=ToolParamsParams, failure_type="wrong_params")
def tool_params(params: ToolParamsParams, ctx: AssertionContext) -> Check:
    """The tool was called with the expected arguments (subset, exact, regex or JSON schema)."""
    every = ctx.tool_calls()
    tool, which_calls = params.tool, params.call  # read once (see tool_called)
    calls = [call for call in every if call.name == tool]
    if not calls:
        return Check.failed(
            with_called(phrased("`{tool}` was never called", tool=tool), every),
            failure_type="tool_not_called",
        )
    total = len(calls)
    numbered: list[tuple[int, TraceToolCall]] = list(enumerate(calls, start=1))
    if which_calls == "first":
        numbered = numbered[:1]
    elif which_calls == "last":
        numbered = numbered[-1:]
    problems = [(n, argument_mismatch(params, call.arguments)) for n, call in numbered]
    bad = [(n, problem) for n, problem in problems if problem is not None]
    # The result points at the first call whose arguments are wrong.
    span_id = calls[bad[0][0] - 1].span.span_id if bad else None
    if which_calls == "any":
        if len(bad) < len(problems):
            good = next(n for n, problem in problems if problem is None)
            return Check.passed(
                phrased("call {n} of {total} of `{tool}` matched", n=good, total=total, tool=tool)
            )
        details = [phrased("call {n}: {problem}", n=n, problem=problem) for n, problem in bad[:3]]
        if len(bad) > 3:
            details.append(phrased("and {more} more", more=len(bad) - 3))
        return Check.failed(
            phrased(
                "no call of `{tool}` had the expected arguments: {details}",
                tool=tool,
                details=each(details),
            ),
            span_id=span_id,
        )
    if bad:
        n, problem = bad[0]
        return Check.failed(
            phrased(
                "call {n} of {total} of `{tool}`: {problem}",
                n=n,
                total=total,
                tool=tool,
                problem=problem,
            ),
            span_id=span_id,
        )
    return Check.passed(_all_matched(which_calls, total, tool))


def _all_matched(which_calls: str, total: int, tool: str) -> Message:
    if which_calls == "first":
        return phrased("the first call of `{tool}` matched", tool=tool)
    if which_calls == "last":
        return phrased("the last call of `{tool}` matched", tool=tool)
    if total == 1:
        return phrased("the only call of `{tool}` matched", tool=tool)
    return phrased("all {total} calls of `{tool}` matched", total=total, tool=tool)
