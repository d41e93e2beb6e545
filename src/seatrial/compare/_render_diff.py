"""A trace diff in words: the divergence sentence, the terminal view, Markdown and JSON.

The terminal view is two columns (A | B), identical rows dimmed and long runs of them elided,
the first divergence marked ``>>`` in bold red with its kind, its sentence and the steps that
led to it. Rows are numbered from 1 here; the JSON keeps 0-based indexes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from seatrial.compare._markdown import markdown_text
from seatrial.compare._steps import Step, answer_text, call_text, short
from seatrial.i18n import current_language, ngettext
from seatrial.i18n import gettext as _
from seatrial.record import AttemptRecord, failure_type_word, verdict_word

if TYPE_CHECKING:
    from seatrial.compare._diff import Row, TraceDiff

_MARKS = {"extra_step": "+", "missing_step": "-"}


@dataclass(frozen=True)
class AttemptHeader:
    """Which attempt a side of the diff is, for the header."""

    run_id: str
    case_id: str
    attempt: int
    verdict: str
    failure_type: str | None
    agent: str
    models: list[str]

    def line(self) -> str:
        """``run R  case C  attempt N  FAIL (loop)  agent SPEC`` on one line."""
        verdict = verdict_word(self.verdict)
        if self.failure_type:
            verdict += _(" ({failure_types})").format(
                failure_types=failure_type_word(self.failure_type)
            )
        return _(
            "run {run_id}  case {case_id}  attempt {attempt}  {verdict}  agent {agent}"
        ).format(
            run_id=self.run_id,
            case_id=self.case_id,
            attempt=self.attempt,
            verdict=verdict,
            agent=self.agent,
        )


def header_of(record: AttemptRecord, agent: str) -> AttemptHeader:
    """The header of a stored attempt (read with its trace, for the model names)."""
    models = [c.model for c in record.trace.model_calls()] if record.trace is not None else []
    return AttemptHeader(
        run_id=record.run_id,
        case_id=record.case_id,
        attempt=record.attempt,
        verdict=record.verdict,
        failure_type=record.failure_type,
        agent=agent,
        models=list(dict.fromkeys(m for m in models if m)),
    )


# -- the divergence sentence -------------------------------------------------------------


def _ordinal(n: int) -> str:
    """``2nd`` in English; the bare number in a language whose sentence says the rest
    (``第 {nth} 次``)."""
    if current_language() != "en":
        return str(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _outcome(step: Step) -> str:
    if step.detail.get("success"):
        return _("succeeded")
    error = step.detail.get("error_type")
    if error:
        return _("FAILED with {error}").format(error=error)
    return _("FAILED with an error")


def _doing(step: Step | None, before: Sequence[Step]) -> str:
    """What a step did, as a verb phrase: ``called read_file(path='a') again ...``."""
    if step is None:
        return _("had stopped")
    detail = step.detail
    if step.kind == "tool_call":
        text = _("called {call}").format(call=call_text(detail["name"], detail["arguments"]))
        prior = [s for s in before if s.kind == "tool_call" and s.key[1:3] == step.key[1:3]]
        if prior:
            text += _(" a {nth} time (it had {outcome})").format(
                nth=_ordinal(len(prior) + 1), outcome=_outcome(prior[-1])
            )
        if not detail["success"] and (not prior or _outcome(prior[-1]) != _outcome(step)):
            text += _(", which {outcome}").format(outcome=_outcome(step))
        return text
    if step.kind == "model_call":
        answer = answer_text(detail.get("answer"))
        text = _("called the model {model}").format(model=detail.get("model") or "").rstrip()
        return text + (_(", which answered {answer}").format(answer=answer) if answer else "")
    if step.kind == "permission":
        return _("was {decision} permission for {tool} ({scope})").format(
            decision=detail.get("decision"), tool=detail.get("tool"), scope=detail.get("scope")
        )
    if step.kind == "state_change":
        return _("changed state ({op} {target})").format(
            op=detail.get("op"), target=detail.get("target")
        )
    return _("replied {text}").format(text=short(detail.get("text", ""), 70))


def _arguments_differ(a: Step, b: Step) -> str:
    args_a, args_b = a.detail["arguments"], b.detail["arguments"]
    if not (isinstance(args_a, dict) and isinstance(args_b, dict)):
        return _("with {b} where A passed {a}").format(b=short(args_b), a=short(args_a))
    keys = [k for k in dict.fromkeys([*args_a, *args_b]) if args_a.get(k) != args_b.get(k)]
    if not keys:  # only whitespace-insensitive parts differ
        keys = list(args_b)
    shown_b = ", ".join(f"{k}={short(args_b.get(k))}" for k in keys[:3])
    shown_a = ", ".join(f"{k}={short(args_a.get(k))}" for k in keys[:3])
    return _("with {b} where A passed {a}").format(b=shown_b, a=shown_a)


def _result(step: Step) -> str:
    if not step.detail.get("success"):
        return _outcome(step)
    return _("returned {result}").format(result=short(step.detail.get("result"), 50))


def summarise(rows: Sequence[Row], index: int) -> str:
    """One sentence saying how row ``index`` differs, naming both sides."""
    row = rows[index]
    before_a = [r.a for r in rows[:index] if r.a is not None]
    before_b = [r.b for r in rows[:index] if r.b is not None]
    a, b = row.a, row.b
    if b is not None and a is None:
        next_a = next((r.a for r in rows[index:] if r.a is not None), None)
        return _("B {b} where A {a}").format(b=_doing(b, before_b), a=_doing(next_a, before_a))
    if a is not None and b is None:
        next_b = next((r.b for r in rows[index:] if r.b is not None), None)
        return _("A {a} where B {b}").format(a=_doing(a, before_a), b=_doing(next_b, before_b))
    assert a is not None and b is not None
    if a.kind == b.kind == "tool_call" and row.kind == "different_arguments":
        return _("B called {tool} {difference}").format(
            tool=b.detail["name"], difference=_arguments_differ(a, b)
        )
    if a.kind == b.kind == "tool_call" and row.kind == "different_tool_result":
        call = call_text(b.detail["name"], b.detail["arguments"])
        return _("{call} {b} in B where it {a} in A").format(call=call, b=_result(b), a=_result(a))
    if a.kind == b.kind == "model_call" and row.kind == "different_model_request":
        hash_a = str(a.detail.get("request_hash"))[:12]
        hash_b = str(b.detail.get("request_hash"))[:12]
        return _(
            "B sent the model a different request than A (request hash {b} vs {a}): what the "
            "model was given had changed"
        ).format(b=hash_b, a=hash_a)
    if a.kind == b.kind == "model_call" and row.kind == "different_model_answer":
        answer_a = answer_text(a.detail.get("answer")) or _("(nothing)")
        answer_b = answer_text(b.detail.get("answer")) or _("(nothing)")
        if a.detail.get("error") != b.detail.get("error"):
            answer_a += f" FAILED ({a.detail['error']})" if a.detail.get("error") else ""
            answer_b += f" FAILED ({b.detail['error']})" if b.detail.get("error") else ""
        return _("the model answered {b} in B where it answered {a} in A").format(
            b=answer_b, a=answer_a
        )
    return _("B {b} where A {a}").format(b=_doing(b, before_b), a=_doing(a, before_a))


# -- views ---------------------------------------------------------------------------------


def visible(rows: Sequence[Row], context: int = 2) -> list[int | tuple[int, int]]:
    """Row indexes to show; ``(start, count)`` stands for an elided run of identical rows."""
    shown: list[int | tuple[int, int]] = []
    index = 0
    while index < len(rows):
        end = index
        while end < len(rows) and rows[end].kind is None:
            end += 1
        if end - index > 2 * context + 1:
            shown.extend(range(index, index + context))
            shown.append((index + context, end - index - 2 * context))
            shown.extend(range(end - context, end))
        else:
            shown.extend(range(index, end))
        if end < len(rows):
            shown.append(end)
        index = end + 1
    return shown


def _models_line(left: str, right: str) -> str:
    if left == right:
        return _("models: {models}").format(models=left)
    return _("models: {a} -> {b}").format(a=left, b=right)


def _headers(diff: TraceDiff, a: AttemptHeader | None, b: AttemptHeader | None) -> list[str]:
    lines = []
    if a is not None and b is not None:
        left, right = ", ".join(a.models) or "-", ", ".join(b.models) or "-"
        lines += [f"A: {a.line()}", f"B: {b.line()}", _models_line(left, right)]
    else:
        models = diff.to_dict()["models"]
        left, right = ", ".join(models["a"]) or "-", ", ".join(models["b"]) or "-"
        lines.append(_models_line(left, right))
    return lines


def _identical_steps(count: int) -> str:
    return ngettext(
        "... {count} identical step ...", "... {count} identical steps ...", count
    ).format(count=count)


def _label(step: Step | None) -> str:
    return step.label if step is not None else ""


def render_terminal(
    diff: TraceDiff,
    a: AttemptHeader | None = None,
    b: AttemptHeader | None = None,
    context: int = 2,
) -> RenderableType:
    """The diff for a terminal (rich): header, the two columns, the first divergence."""
    parts: list[RenderableType] = [Text(line) for line in _headers(diff, a, b)]
    table = Table(show_edge=False, pad_edge=False, box=None, expand=False)
    for name, ratio in (("", None), ("#", None), ("A", 1), ("B", 1), ("", None)):
        table.add_column(name, ratio=ratio, overflow="fold", no_wrap=ratio is None)
    first = diff.first.row if diff.first is not None else None
    for item in visible(diff.rows, context):
        if isinstance(item, tuple):
            table.add_row("", "", Text(_identical_steps(item[1])), "", "", style="dim italic")
            continue
        row = diff.rows[item]
        mark = ">>" if item == first else _MARKS.get(row.kind or "", "!" if row.kind else "")
        style = "bold red" if item == first else ("dim" if row.kind is None else "yellow")
        table.add_row(
            mark,
            str(item + 1),
            Text(_label(row.a)),
            Text(_label(row.b)),
            row.kind or "",
            style=style,
        )
    parts += [Text(""), table, Text("")]
    if diff.first is None:
        parts.append(
            Text.from_markup(
                ngettext(
                    "[green]identical[/]: {count} step, no divergence",
                    "[green]identical[/]: {count} steps, no divergence",
                    len(diff.rows),
                ).format(count=len(diff.rows))
            )
        )
        return Group(*parts)
    found = diff.first
    parts.append(
        Text.from_markup(
            _("[bold red]>> first divergence at step {step} ({kind})[/]: {summary}").format(
                step=found.row + 1, kind=found.kind, summary=escape(found.summary)
            )
        )
    )
    if found.led_to:
        parts.append(Text("   " + _("what led to it:")))
        start = found.row - len(found.led_to)
        for offset, row in enumerate(found.led_to):
            step = row.a or row.b
            parts.append(
                Text(
                    "     "
                    + _("step {step}  {label}").format(step=start + offset + 1, label=_label(step))
                )
            )
    return Group(*parts)


def render_markdown(
    diff: TraceDiff,
    a: AttemptHeader | None = None,
    b: AttemptHeader | None = None,
    context: int = 2,
) -> str:
    """The diff as Markdown, ready to paste into a pull request comment."""
    lines = [_("## Trace diff"), ""]
    lines += [f"- {markdown_text(line)}" for line in _headers(diff, a, b)]
    lines.append("")
    if diff.first is None:
        lines.append(
            ngettext(
                "**Identical**: {count} step, no divergence.",
                "**Identical**: {count} steps, no divergence.",
                len(diff.rows),
            ).format(count=len(diff.rows))
        )
    else:
        found = diff.first
        summary = markdown_text(found.summary)
        lines.append(
            _("**First divergence at step {step} (`{kind}`)**: {summary}").format(
                step=found.row + 1, kind=found.kind, summary=summary
            )
        )
    lines += ["", "| | # | A | B | |", "|---|---|---|---|---|"]
    first = diff.first.row if diff.first is not None else None
    for item in visible(diff.rows, context):
        if isinstance(item, tuple):
            lines.append(f"| | | *{_identical_steps(item[1])}* | | |")
            continue
        row = diff.rows[item]
        left, right = markdown_text(_label(row.a)), markdown_text(_label(row.b))
        if item == first:
            mark = "**>>**"
            left, right = (f"**{left}**" if left else ""), (f"**{right}**" if right else "")
        else:
            mark = _MARKS.get(row.kind or "", "!" if row.kind else "")
        kind = f"`{row.kind}`" if row.kind else ""
        lines.append(f"| {mark} | {item + 1} | {left} | {right} | {kind} |")
    return "\n".join(lines) + "\n"


def diff_json(
    diff: TraceDiff, a: AttemptHeader | None = None, b: AttemptHeader | None = None
) -> dict[str, Any]:
    """:meth:`TraceDiff.to_dict` with the two attempts' headers (``a``, ``b``)."""
    data = diff.to_dict()
    data["a"] = asdict(a) if a is not None else None
    data["b"] = asdict(b) if b is not None else None
    return data
