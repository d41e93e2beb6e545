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
from seatrial.record import DEFAULT_CONCURRENCY

FORMS = (
    "python:module:function",
    "python:path/to/agent.py:function",
    "http://host:port/path (or https://)",
    "recorded:path/to/sessions.jsonl",
    "model:NAME (NAME a model under `models:` in seatrial.yaml)",
    "a name from `agents` in seatrial.yaml",
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
            f"agent `{name}` in seatrial.yaml must be a spec string or a mapping with `spec`"
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
            f"agent `{name}` in seatrial.yaml: retry.{where}: {first['msg']}; "
            "see docs/agents.md (Retries) for tries, backoff_s, max_wait_s and on_status"
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
            raise AgentSpecError(f"`headers` and a `transport` apply to http agents only: `{spec}`")
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
        raise AgentSpecError(f"`headers` apply to http agents only, not to `{spec}`")
    if transport is not None and spec.startswith((_python.PREFIX, *_recorded.PREFIXES)):
        raise AgentSpecError(f"a `transport` applies to http agents only, not to `{spec}`")
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
                    f"{where}: `headers` and `retry` apply to http agents only, not to a "
                    "model agent; remove them"
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
                f"agent `{spec}` in seatrial.yaml has spec `{target}`, which is none of: "
                + "; ".join(FORMS[:-1])
            )
        return adapter
    names = sorted(agents or ())
    hint = ""
    close = difflib.get_close_matches(spec, names, n=1)
    if close:
        hint = f" Did you mean `{close[0]}`?"
    known = f" Named agents: {', '.join(names)}." if names else ""
    raise AgentSpecError(f"unknown agent `{spec}`.{hint} Write one of: {'; '.join(FORMS)}.{known}")
