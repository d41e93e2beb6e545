"""Masking personal data before storage: one consistent token per value within a trace.

Every string of a trace is masked: span names, status messages, attribute values, span event
names and their attribute values (inside lists and mappings too), and the resource's values.
A string holding a JSON document (``gen_ai.tool.call.arguments``) is parsed and its strings
masked one by one, so it stays valid JSON; an integer that as a whole is a phone, ID card
or bank card number becomes its token. Keys are never masked.

A value keeps one token within a trace (``<PHONE_1>`` wherever that number appears, however
it is written), numbered in order of first appearance. The masker remembers the tokens of the
traces it masked most recently, so spans of one trace that arrive in several batches share
them; see :class:`Masker` for the bound and what happens past it.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from seatrial.dataset._mask_find import SMALLEST_WHOLE_NUMBER, Detector, Hit
from seatrial.dataset._mask_settings import MaskSettings
from seatrial.i18n import gettext as _
from seatrial.trace import Span, SpanEvent, SpanLink, Trace, decode_attribute, trusted_model

DEFAULT_MAX_TRACES = 10_000
"""Traces whose value-to-token maps a :class:`Masker` keeps."""

DEFAULT_MAX_FORGOTTEN = 200_000
"""Evicted traces whose next free token numbers a :class:`Masker` still keeps."""


@dataclass(frozen=True)
class MaskedTrace:
    """A trace with its personal data replaced, and how many values of each kind were."""

    trace: Trace
    counts: dict[str, int]
    """Replacements per kind (``phone``, ``id_card``, ``name``, a custom pattern's name ...)."""


@dataclass(frozen=True)
class MaskFinding:
    """One value masking would replace, described without showing it."""

    trace_id: str
    kind: str
    where: str
    """Where it is: ``span 5f3a9c01 attribute gen_ai.tool.call.arguments $.phone``."""
    preview: str
    """The value with its middle hidden (``138****8000``)."""
    token: str
    """What replaces it (``<PHONE_1>``)."""


@dataclass
class _Tokens:
    """The tokens of one trace: value key -> token, and the last number used per prefix."""

    by_value: dict[tuple[str, str], str] = field(default_factory=dict)
    last: dict[str, int] = field(default_factory=dict)

    def token(self, hit: Hit) -> str:
        key = (hit.kind, hit.key)
        token = self.by_value.get(key)
        if token is None:
            prefix = hit.kind.upper()
            number = self.last.get(prefix, 0) + 1
            self.last[prefix] = number
            token = f"<{prefix}_{number}>"
            self.by_value[key] = token
        return token


class _Pass:
    """One masking pass over values of one trace: replaces, counts, and may note findings."""

    def __init__(
        self,
        detector: Detector,
        tokens: _Tokens,
        trace_id: str,
        findings: list[MaskFinding] | None = None,
    ) -> None:
        self.detector = detector
        self.tokens = tokens
        self.trace_id = trace_id
        self.counts: dict[str, int] = {}
        self.findings = findings
        self.prefilter = detector.prefilters

    def value(self, value: Any, where: str) -> Any:
        """``value`` masked; the same object when nothing in it needed masking."""
        kind = type(value)
        if kind is str:
            return self.string(value, where)
        if kind is int:
            hit = self.detector.whole_number(value)
            return value if hit is None else self._token(hit, where)
        if kind is list or kind is tuple:
            noting = self.findings is not None
            items = [
                self.value(item, f"{where}[{i}]" if noting else where)
                for i, item in enumerate(value)
            ]
            if all(new is old for new, old in zip(items, value, strict=True)):
                return value
            return items if kind is list else tuple(items)
        if kind is dict:
            return self.mapping(value, where)
        return value

    def mapping(self, values: dict[str, Any], where: str, joiner: str = ".") -> dict[str, Any]:
        """A mapping's values masked (keys as they are); the same mapping when unchanged."""
        masked: dict[str, Any] | None = None
        noting = self.findings is not None
        for key, old in values.items():
            new = self.value(old, f"{where}{joiner}{key}" if noting else where)
            if new is not old:
                if masked is None:
                    masked = dict(values)
                masked[key] = new
        return values if masked is None else masked

    def string(self, text: str, where: str) -> str:
        """``text`` masked; JSON documents are masked inside and stay valid JSON."""
        if not self.detector.may_hold(text):
            return text
        start = text.lstrip()[:1]
        # A JSON object or list (tool arguments, results) is masked inside, so it stays JSON.
        document = decode_attribute(text) if start == "{" or start == "[" else text
        if not isinstance(document, str):
            masked = self.value(document, f"{where} $")
            if masked is document:
                return text
            separators = (", ", ": ") if ": " in text else (",", ":")
            return json.dumps(masked, ensure_ascii=text.isascii(), separators=separators)
        hits = self.detector.hits(text)
        if not hits:
            return text
        parts = []
        end = 0
        for hit in hits:
            parts.append(text[end : hit.start])
            parts.append(self._token(hit, where))
            end = hit.end
        parts.append(text[end:])
        return "".join(parts)

    def _token(self, hit: Hit, where: str) -> str:
        token = self.tokens.token(hit)
        self.counts[hit.kind] = self.counts.get(hit.kind, 0) + 1
        if self.findings is not None:
            self.findings.append(MaskFinding(self.trace_id, hit.kind, where, hit.preview, token))
        return token

    def span(self, span: Span) -> Span:
        """``span`` with its name, status message, attributes and events (names, attributes)
        masked."""
        if self.prefilter and not self.detector.may_hold_any(_span_texts(span)):
            # Most spans hold nothing to mask: one test over all their strings spares the
            # per-value work (and the JSON parsing of tool arguments and results).
            return span
        label = at_name = at_message = at_attribute = ""
        if self.findings is not None:  # the places --check shows, in the reader's language
            label = f"span {span.span_id}"
            at_name = _("{span} name").format(span=label)
            at_message = _("{span} status message").format(span=label)
            at_attribute = _("{span} attribute").format(span=label)
        name = self.string(span.name, at_name)
        message = self.string(span.status_message, at_message)
        attributes = self.mapping(span.attributes, at_attribute, " ")
        events = [self._event(event, label) for event in span.events]
        links = [self._link(link, label) for link in span.links]
        if (
            name is span.name
            and message is span.status_message
            and attributes is span.attributes
            and all(new is old for new, old in zip(events, span.events, strict=True))
            and all(new is old for new, old in zip(links, span.links, strict=True))
        ):
            return span
        return span.model_copy(
            update={
                "name": name,
                "status_message": message,
                "attributes": attributes,
                "events": events,
                "links": links,
            }
        )

    def _link(self, link: SpanLink, label: str) -> SpanLink:
        where = _("{span} link attribute").format(span=label) if self.findings is not None else ""
        attributes = self.mapping(link.attributes, where, " ")
        if attributes is link.attributes:
            return link
        return link.model_copy(update={"attributes": attributes})

    def _event(self, event: SpanEvent, label: str) -> SpanEvent:
        noting = self.findings is not None
        name = self.string(event.name, _("{span} event name").format(span=label) if noting else "")
        # A finding's place names the event by its masked name: never the value itself.
        where = _("{span} event {name} attribute").format(span=label, name=name) if noting else ""
        attributes = self.mapping(event.attributes, where, " ")
        if name is event.name and attributes is event.attributes:
            return event
        return event.model_copy(update={"name": name, "attributes": attributes})

    def trace(self, trace: Trace) -> Trace:
        """A new trace with every span and the resource masked (ids and times as they were)."""
        spans = [self.span(span) for span in trace.spans]
        resource = trace.resource
        if not self.prefilter or self.detector.may_hold_any(_texts(resource.values(), [])):
            resource = self.mapping(resource, "resource", " ")
        # A new Trace, not a copy: a copy would carry the original's cached tool-call views.
        # Its values are the trace's own, validated when it was made, or masked strings in
        # their place: nothing to validate again. The resource is copied, as validating did.
        return trusted_model(
            Trace,
            {
                "format_version": trace.format_version,
                "trace_id": trace.trace_id,
                "spans": spans,
                "resource": dict(resource),
            },
        )


def _span_texts(span: Span) -> list[str]:
    """Every string :meth:`_Pass.span` looks at (see :func:`_texts`)."""
    texts = _texts(span.attributes.values(), [span.name, span.status_message])
    for event in span.events:
        texts.append(event.name)
        _texts(event.attributes.values(), texts)
    for link in span.links:
        _texts(link.attributes.values(), texts)
    return texts


def _texts(values: Iterable[Any], found: list[str]) -> list[str]:
    """``found`` with every string :meth:`_Pass.value` looks at in ``values`` added: strings,
    those inside lists, tuples and dicts, and the digits of integers long enough to be a
    number masking looks for."""
    for value in values:
        kind = type(value)
        if kind is str:
            found.append(value)
        elif kind is int:
            if value >= SMALLEST_WHOLE_NUMBER:
                found.append(str(value))
        elif kind is dict:
            _texts(value.values(), found)
        elif kind is list or kind is tuple:
            _texts(value, found)
    return found


class Masker:
    """Replaces personal data by tokens, consistently within each trace.

    The value-to-token maps of the ``max_traces`` traces masked most recently (those that held
    anything to mask) are kept, so a trace whose spans arrive in several batches keeps its
    tokens. When a trace falls out, only its last number per kind is kept (for
    ``max_forgotten`` more traces): a later batch of it numbers new values after them, so two
    values never share a token, though a value seen before the eviction gets a new one. A
    trace forgotten entirely starts again at 1, and its new ``<PHONE_1>`` may then name another
    number than the stored one did; at 20,000 spans a second that takes hours, far longer than
    an exporter holds a trace's spans back.

    Safe to share between threads.
    """

    def __init__(
        self,
        settings: MaskSettings | None = None,
        *,
        max_traces: int = DEFAULT_MAX_TRACES,
        max_forgotten: int = DEFAULT_MAX_FORGOTTEN,
    ) -> None:
        self.settings = settings or MaskSettings()
        self._detector = Detector(self.settings)
        self._max_traces = max_traces
        self._max_forgotten = max_forgotten
        self._recent: OrderedDict[str, _Tokens] = OrderedDict()
        self._forgotten: OrderedDict[str, dict[str, int]] = OrderedDict()
        self._lock = threading.Lock()

    def mask_trace(self, trace: Trace) -> MaskedTrace:
        """``trace`` with every string masked, and the replacements per kind."""
        with self._lock:
            tokens = self._tokens(trace.trace_id)
            masking = _Pass(self._detector, tokens, trace.trace_id)
            masked = masking.trace(trace)
            self._remember(trace.trace_id, tokens)
        return MaskedTrace(masked, masking.counts)

    def mask_text(self, text: str, scope: str) -> str:
        """``text`` masked, with the tokens of ``scope`` (a trace id, or any name for texts
        that belong together)."""
        with self._lock:
            tokens = self._tokens(scope)
            masked = _Pass(self._detector, tokens, scope).string(text, "")
            self._remember(scope, tokens)
        return masked

    def findings(self, trace: Trace) -> list[MaskFinding]:
        """What masking ``trace`` would replace, where, and by which token.

        The tokens are those a first masking of the trace gives; the masker's memory is not
        changed.
        """
        found: list[MaskFinding] = []
        _Pass(self._detector, _Tokens(), trace.trace_id, found).trace(trace)
        return found

    def text_findings(self, lines: Iterable[str], scope: str = "text") -> list[MaskFinding]:
        """What masking would replace in lines of plain text (``where`` is ``line N``), with
        one set of tokens for all of them; the masker's memory is not changed."""
        found: list[MaskFinding] = []
        masking = _Pass(self._detector, _Tokens(), scope, found)
        for number, line in enumerate(lines, start=1):
            masking.string(line, _("line {number}").format(number=number))
        return found

    def _tokens(self, scope: str) -> _Tokens:
        tokens = self._recent.get(scope)
        if tokens is not None:
            self._recent.move_to_end(scope)
            return tokens
        last = self._forgotten.pop(scope, None)
        return _Tokens(last=last) if last is not None else _Tokens()

    def _remember(self, scope: str, tokens: _Tokens) -> None:
        if not tokens.last or scope in self._recent:
            return  # nothing masked in it yet: a later batch starts at 1 anyway
        self._recent[scope] = tokens
        while len(self._recent) > self._max_traces:
            old_scope, old = self._recent.popitem(last=False)
            self._forgotten[old_scope] = old.last
            while len(self._forgotten) > self._max_forgotten:
                self._forgotten.popitem(last=False)
