"""From an ``--agent`` spec (or a name in seatrial.yaml) to an adapter."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError

from seatrial.agent import _python, _recorded
from seatrial.agent._http import HttpAgent
from seatrial.agent._model_spec import check_not_model_keys, model_agent, where_in_config
from seatrial.agent._protocol import AgentAdapter
from seatrial.agent._python import PythonAgent
from seatrial.agent._recorded import RecordedAgent
from seatrial.agent._retry import AgentRetry
from seatrial.case import MODEL_PREFIX
from seatrial.errors import AgentSpecError
from seatrial.i18n import N_, current_language, pgettext
from seatrial.i18n import gettext as _
from seatrial.record import DEFAULT_CONCURRENCY

FORMS = (
    "python:module:function",
    "python:path/to/agent.py:function",
    N_("http://host:port/path (or https://)"),
    "recorded:path/to/sessions.jsonl",
    N_("model:NAME (NAME a model under `models:` in seatrial.yaml)"),
    N_("a name from `agents` in seatrial.yaml"),
)


def _entry(
    value: Any, name: str
) -> tuple[str, dict[str, str] | None, float | None, AgentRetry | None]:
    """A seatrial.yaml agent entry: a spec string, or {spec, headers, timeout_s, retry}."""
    if isinstance(value, str):
        return value, None, None, None
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    if not isinstance(value, Mapping) or not isinstance(value.get("spec"), str):
        raise AgentSpecError(
            _(
                "agent `{name}` in seatrial.yaml must be a spec string or a mapping with `spec`"
            ).format(name=name)
        )
    headers = value.get("headers")
    timeout = value.get("timeout_s")
    return value["spec"], dict(headers) if headers else None, timeout, _retry(value, name)


def _retry(entry: Mapping[str, Any], name: str) -> AgentRetry | None:
    """The entry's ``retry:`` settings, checked; None when it sets none."""
    given = entry.get("retry")
    if not given:
        return None
    try:
        return AgentRetry.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise AgentSpecError(
            _(
                "agent `{name}` in seatrial.yaml: retry.{where}: {why}; "
                "see docs/agents.md (Retries) for tries, backoff_s, max_wait_s and on_status"
            ).format(name=name, where=where, why=first["msg"])
        ) from exc


def _build(
    spec: str,
    *,
    name: str | None,
    headers: dict[str, str] | None,
    base_dir: Path | None,
    concurrency: int,
    timeout_s: float | None,
    transport: httpx.AsyncBaseTransport | None,
    retry: AgentRetry | None = None,
    models: Mapping[str, Any] | None = None,
) -> AgentAdapter | None:
    if spec.startswith(MODEL_PREFIX):
        if headers or transport is not None:
            raise AgentSpecError(
                _("`headers` and a `transport` apply to http agents only: `{spec}`").format(
                    spec=spec
                )
            )
        return model_agent(
            spec,
            entry=None,
            name=name,
            models=models,
            base_dir=base_dir or Path.cwd(),
            where=None,
            timeout_s=timeout_s,
        )
    if spec.startswith(("http://", "https://")):
        return HttpAgent(
            spec,
            headers=headers,
            concurrency=concurrency,
            timeout_s=timeout_s,
            name=name,
            spec=spec,
            transport=transport,
            retry=retry,
        )
    if headers:
        raise AgentSpecError(
            _("`headers` apply to http agents only, not to `{spec}`").format(spec=spec)
        )
    if transport is not None and spec.startswith((_python.PREFIX, *_recorded.PREFIXES)):
        raise AgentSpecError(
            _("a `transport` applies to http agents only, not to `{spec}`").format(spec=spec)
        )
    if spec.startswith(_python.PREFIX):
        return PythonAgent(spec, base_dir=base_dir, name=name, concurrency=concurrency)
    recorded = next((p for p in _recorded.PREFIXES if spec.startswith(p)), None)
    if recorded is not None:
        path = Path(spec.removeprefix(recorded))
        if not path.is_absolute():
            path = (base_dir or Path.cwd()) / path
        return RecordedAgent(path, spec=spec, name=name)
    return None


def resolve_agent(
    spec: str,
    *,
    agents: Mapping[str, Any] | None = None,
    base_dir: Path | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    timeout_s: float | None = None,
    agents_dir: Path | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    models: Mapping[str, Any] | None = None,
) -> AgentAdapter:
    """The adapter for ``spec``: ``python:``, ``http(s)://``, ``recorded:`` (or ``replay:``),
    or a named agent.

    ``agents`` maps names (seatrial.yaml's ``agents``) to a spec string or to
    ``{spec, headers, timeout_s}``; a named agent's ``timeout_s`` wins over ``timeout_s``.
    Relative paths in a spec resolve against ``base_dir`` (default: the current folder);
    those in a named agent's spec against ``agents_dir`` (the folder holding seatrial.yaml;
    default: ``base_dir``). ``transport`` (an ``httpx.MockTransport`` in a test) answers an
    http agent's posts in place of the network; other agents refuse it. ``models``
    (seatrial.yaml ``models:``), when given, must hold the model of a ``model:NAME`` agent.
    """
    spec = spec.strip()
    adapter = _build(
        spec,
        name=None,
        headers=None,
        base_dir=base_dir,
        concurrency=concurrency,
        timeout_s=timeout_s,
        transport=transport,
        models=models,
    )
    if adapter is not None:
        return adapter
    if agents and spec in agents:
        target, headers, own_timeout, retry = _entry(agents[spec], spec)
        folder = agents_dir or base_dir
        raw = agents[spec]
        entry = raw.model_dump() if hasattr(raw, "model_dump") else raw
        if isinstance(entry, Mapping) and target.startswith(MODEL_PREFIX):
            where = where_in_config(folder, spec)
            if headers or retry:
                raise AgentSpecError(
                    _(
                        "{where}: `headers` and `retry` apply to http agents only, not to a "
                        "model agent; remove them"
                    ).format(where=where)
                )
            return model_agent(
                target,
                entry=entry,
                name=spec,
                models=models,
                base_dir=folder or Path.cwd(),
                where=where,
                timeout_s=own_timeout if own_timeout is not None else timeout_s,
            )
        if isinstance(entry, Mapping):
            check_not_model_keys(entry, target, folder, spec)
        adapter = _build(
            target,
            name=spec,
            headers=headers,
            base_dir=agents_dir or base_dir,
            concurrency=concurrency,
            timeout_s=own_timeout if own_timeout is not None else timeout_s,
            transport=transport,
            retry=retry,
        )
        if adapter is None:
            raise AgentSpecError(
                _(
                    "agent `{name}` in seatrial.yaml has spec `{target}`, which is none of: {forms}"
                ).format(name=spec, target=target, forms=_forms(FORMS[:-1]))
            )
        return adapter
    names = sorted(agents or ())
    said = [_("unknown agent `{spec}`.").format(spec=spec)]
    close = difflib.get_close_matches(spec, names, n=1)
    if close:
        said.append(_("Did you mean `{name}`?").format(name=close[0]))
    said.append(_("Write one of: {forms}.").format(forms=_forms(FORMS)))
    if names:
        said.append(_("Named agents: {names}.").format(names=", ".join(names)))
    # English sentences are separated by a space; Chinese ones (ending in 。) by nothing.
    raise AgentSpecError((" " if current_language() == "en" else "").join(said))


def _forms(forms: tuple[str, ...]) -> str:
    """The spec forms in the reader's language, as a list."""
    return pgettext("list separator", "; ").join(_(form) for form in forms)
