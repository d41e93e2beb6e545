"""Report files: report.json, junit.xml, summary.md (its text: :mod:`._summary`)."""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO
from xml.etree import ElementTree as ET

from pydantic_core import to_json as to_json_text

from seatrial.i18n import gettext as _
from seatrial.i18n import render as rendered
from seatrial.record import AttemptRecord, CaseResult
from seatrial.report._build import RunReport
from seatrial.report._summary import to_markdown
from seatrial.report._why import assertion_lines
from seatrial.store import Store

REPORT_FORMAT_VERSION = 1
FORMATS = ("json", "junit", "md")


def _attempt_json(a: AttemptRecord) -> dict[str, Any]:
    return {
        "attempt": a.attempt,
        "verdict": a.verdict,
        "failure_type": a.failure_type,
        "reason": a.reason,
        "score": a.score,
        "error": a.error,
        "response": a.response,
        "metrics": a.metrics.model_dump(),
        "assertions": [r.model_dump() for r in a.assertions],
    }


def to_json(report: RunReport) -> dict[str, Any]:
    """The report.json document (of a report built with its attempts)."""
    document = _document(report, _loaded(report))
    document["cases"] = [{**case, "attempts": list(case["attempts"])} for case in document["cases"]]
    return document


CaseAttempts = tuple[CaseResult, int, Iterable[AttemptRecord]]
"""A case of a report, how many attempts it has, and those attempts in order."""


def _document(report: RunReport, cases: Iterable[CaseAttempts]) -> dict[str, Any]:
    """report.json's document with its cases, and each case's attempts, as iterators."""
    info = report.info
    return {
        "format_version": REPORT_FORMAT_VERSION,
        "run_id": info.run_id,
        "suite": info.suite,
        "agent": info.agent,
        "tags": info.tags,
        "status": info.status,
        "started_at": info.started_at,
        "finished_at": info.finished_at,
        "seatrial_version": info.seatrial_version,
        "summary": report.summary.model_dump(),
        "spend_usd": {"total": sum(report.spend_usd.values()), **report.spend_usd},
        "unpriced_models": report.unpriced_models,
        "judge": report.judge,
        "gate": report.gate.model_dump(mode="json"),
        "statistics": report.statistics.model_dump() if report.statistics else None,
        "flaky": report.flaky,
        "baseline": report.baseline,
        "dataset": report.dataset,
        "version_drift": [d.model_dump() for d in report.version_drift],
        "simulator": report.simulator.model_dump() if report.simulator else None,
        "categories": [c.model_dump() for c in report.categories],
        "cases": (
            {
                "case_id": c.case_id,
                "name": c.name,
                "category": c.category,
                "priority": c.priority,
                "verdict": c.verdict,
                "pass_rate": c.pass_rate,
                "attempts": map(_attempt_json, attempts),
            }
            for c, _, attempts in cases
        ),
    }


def _loaded(report: RunReport) -> Iterator[CaseAttempts]:
    """The cases of a report built with its attempts."""
    for case in report.cases:
        yield case, len(case.attempts), case.attempts


def _streamed(report: RunReport, store: Store) -> Iterator[CaseAttempts]:
    """The cases of a report with their attempts read from ``store`` a page at a time
    (:meth:`Store.attempts_in_pages`): each case's attempts must be used up before the next
    case is taken, as the writers do."""
    wanted = [(case.case_id, case.attempt_count) for case in report.cases]
    records = store.attempts_in_pages(report.info.run_id, wanted)
    pending = next(records, None)

    def of_case(case_id: str) -> Iterator[AttemptRecord]:
        nonlocal pending
        while pending is not None and pending.case_id == case_id:
            yield pending
            pending = next(records, None)

    for case in report.cases:
        yield case, case.attempt_count, of_case(case.case_id)


def to_junit(report: RunReport) -> str:
    """JUnit XML (of a report built with its attempts): one testcase per attempt, classname =
    category."""
    text = io.StringIO()
    _write_junit(text, report, _loaded(report))
    return text.getvalue()


def _write_junit(handle: TextIO, report: RunReport, cases: Iterable[CaseAttempts]) -> None:
    """Write junit.xml a testcase at a time, as ElementTree writes the whole tree indented."""
    _write_junit_head(handle, report)
    for case, count, attempts in cases:
        for a in attempts:
            _write_testcase(handle, report, case, count, a)
    handle.write(_JUNIT_TAIL)


_JUNIT_TAIL = "\n</testsuite>\n"


def _write_junit_head(handle: TextIO, report: RunReport) -> None:
    """The head (the suite and its properties): ElementTree's own text up to the end of the
    properties; each testcase then follows as ElementTree's text of that element, indented
    one level (:func:`_write_testcase`), and :data:`_JUNIT_TAIL` ends the file."""
    s = report.summary
    suite = ET.Element(
        "testsuite",
        name=report.info.suite,
        tests=str(s.attempts),
        failures=str(s.failed),
        errors=str(s.errors),
        skipped="0",
        timestamp=str(report.info.started_at),
    )
    props = ET.SubElement(suite, "properties")
    gate = "met" if report.gate.passed else "not met"
    properties = [("run_id", report.info.run_id), ("agent", report.info.agent), ("gate", gate)]
    if report.gate.rule:
        properties.append(("gate_rule", report.gate.rule))
    properties += [(f"gate_unmet_{n}", reason) for n, reason in enumerate(report.gate.reasons, 1)]
    for name, value in properties:
        ET.SubElement(props, "property", name=name, value=value)
    ET.indent(suite)
    head = ET.tostring(suite, encoding="unicode", xml_declaration=True)
    # Values are escaped, so the properties' closing tag is the only one in the text.
    handle.write(head[: head.rindex("</properties>") + len("</properties>")])


def _write_testcase(
    handle: TextIO, report: RunReport, case: CaseResult, count: int, a: AttemptRecord
) -> None:
    element = _testcase(report, case, count, a)
    ET.indent(element, level=1)
    handle.write("\n  " + ET.tostring(element, encoding="unicode"))


def _also_junit(
    handle: TextIO, report: RunReport, cases: Iterable[CaseAttempts]
) -> Iterator[CaseAttempts]:
    """``cases`` as they come, each attempt written to junit.xml as it is taken: one read of
    the attempts from the store makes both report.json and junit.xml."""

    def written(
        case: CaseResult, count: int, attempts: Iterable[AttemptRecord]
    ) -> Iterator[AttemptRecord]:
        for a in attempts:
            _write_testcase(handle, report, case, count, a)
            yield a

    for case, count, attempts in cases:
        yield case, count, written(case, count, attempts)


def _testcase(report: RunReport, case: CaseResult, count: int, a: AttemptRecord) -> ET.Element:
    name = case.case_id if count == 1 else f"{case.case_id}#{a.attempt}"
    element = ET.Element(
        "testcase",
        classname=case.category or report.info.suite,
        name=name,
        time=f"{a.metrics.wall_time_ms / 1000:.3f}",
    )
    if a.verdict == "FAIL":
        reason = rendered(a.message, a.reason)
        failure = ET.SubElement(element, "failure", type=a.failure_type or "", message=reason)
        failure.text = "\n".join(assertion_lines(a))
    elif a.verdict == "ERROR":
        reason = rendered(a.message, a.reason)
        error = ET.SubElement(element, "error", type=a.failure_type or "", message=reason)
        error.text = a.error or ""
    elif a.verdict == "WARNING":
        reason = rendered(a.message, a.reason)
        ET.SubElement(element, "system-out").text = _("WARNING: {reason}").format(reason=reason)
    return element


def render(report: RunReport, fmt: str) -> str:
    """The report in one of FORMATS."""
    if fmt == "json":
        text = io.StringIO()
        _write_json(text, to_json(report))
        return text.getvalue()
    if fmt == "junit":
        return to_junit(report)
    if fmt == "md":
        return to_markdown(report)
    raise ValueError(f"unknown report format {fmt!r}; use one of {', '.join(FORMATS)}")


def _write_json(handle: TextIO, document: dict[str, Any]) -> None:
    """Write ``document`` as ``json.dumps(document, indent=2, ensure_ascii=False)`` would
    (but for exponents: ``1e-7`` where the standard library writes ``1e-07``).

    Encoded in Rust (pydantic-core) a value at a time, each list element by itself: five
    times faster than the standard library's pure-Python indenting encoder, and the text of
    a large run's report is never held whole. An iterator stands for a list whose elements
    are made as they are written (a report's cases and their attempts, streamed from the
    store), so neither the document nor its text is ever held whole.
    """
    _write_members(handle, document, 0)
    handle.write("\n")


def _encoded(value: Any, depth: int) -> str:
    text = to_json_text(value, indent=2, inf_nan_mode="constants").decode()
    return text.replace("\n", "\n" + "  " * depth) if depth else text


def _write_value(handle: TextIO, value: Any, depth: int) -> None:
    if isinstance(value, Iterator):
        _write_items(handle, value, depth)
    elif isinstance(value, dict) and any(isinstance(v, Iterator) for v in value.values()):
        _write_members(handle, value, depth)
    elif isinstance(value, list) and depth <= 1:
        _write_items(handle, iter(value), depth)
    else:
        handle.write(_encoded(value, depth))


def _streams(value: Any, depth: int) -> bool:
    """Whether :func:`_write_value` writes ``value`` a part at a time at ``depth``."""
    return (
        isinstance(value, Iterator)
        or (isinstance(value, dict) and any(isinstance(v, Iterator) for v in value.values()))
        or (isinstance(value, list) and depth <= 1)
    )


def _write_members(handle: TextIO, members: dict[str, Any], depth: int) -> None:
    if not members:
        handle.write("{}")
        return
    handle.write("{")
    inner = "\n" + "  " * (depth + 1)
    # Members written whole are encoded together, in one call (a report's case has six before
    # its attempts): the same text as one call each.
    whole: dict[str, Any] = {}
    written = False

    def write_whole() -> None:
        nonlocal whole, written
        if whole:
            handle.write(("," if written else "") + _encoded_members(whole, depth))
            whole, written = {}, True

    for key, value in members.items():
        if not _streams(value, depth + 1):
            whole[str(key)] = value
            continue
        write_whole()
        handle.write("," + inner if written else inner)
        written = True
        handle.write(_encoded(str(key), 0) + ": ")
        _write_value(handle, value, depth + 1)
    write_whole()
    handle.write("\n" + "  " * depth + "}")


def _encoded_members(members: dict[str, Any], depth: int) -> str:
    """``members`` as the lines they take inside a mapping at ``depth``, each on its own line
    (a newline and the indent before each), without the braces around them."""
    text = _encoded(members, depth)  # "{" newline, the members, newline, indent, "}"
    return text[1 : text.rindex("\n")]


def _write_items(handle: TextIO, items: Iterator[Any], depth: int) -> None:
    inner = "\n" + "  " * (depth + 1)
    written = False
    for item in items:
        handle.write("," + inner if written else "[" + inner)
        _write_value(handle, item, depth + 1)
        written = True
    handle.write("\n" + "  " * depth + "]" if written else "[]")


def write_reports(report: RunReport, directory: Path, store: Store | None = None) -> list[Path]:
    """Write report.json, junit.xml and summary.md; each file appears whole or not at all.

    With ``store`` the attempts are read from it a page at a time, case by case, into
    report.json and junit.xml together (a report built with ``with_attempts=False`` has none
    of its own); without it they are the report's own.
    """
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / name for name in ("report.json", "junit.xml", "summary.md")]
    temporary = []
    for path in paths:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.")
        temporary.append((os.fdopen(fd, "w", encoding="utf-8"), tmp))
    (json_file, _), (junit_file, _), (md_file, _) = temporary
    try:
        cases = _loaded(report) if store is None else _streamed(report, store)
        _write_junit_head(junit_file, report)
        _write_json(json_file, _document(report, _also_junit(junit_file, report, cases)))
        junit_file.write(_JUNIT_TAIL)
        md_file.write(to_markdown(report))
    except BaseException:
        for handle, tmp in temporary:  # nothing half-written is left in the directory
            handle.close()
            os.unlink(tmp)
        raise
    for handle, _ in temporary:
        handle.close()
    for (_, tmp), path in zip(temporary, paths, strict=True):
        os.replace(tmp, path)
    return paths
