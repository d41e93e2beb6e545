"""From ``model:NAME`` (and a named agent's keys in seatrial.yaml) to a :class:`ModelAgent`."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from seatrial.agent._model import ModelAgent
from seatrial.case import MODEL_AGENT_KEYS, MODEL_PREFIX, ModelAgentSettings, parse_yaml, read_text
from seatrial.errors import AgentSpecError
from seatrial.i18n import gettext as _

CONFIG_FILE = "seatrial.yaml"
_DEFAULTS = {key: getattr(ModelAgentSettings(), key) for key in MODEL_AGENT_KEYS}


def where_in_config(folder: Path | None, name: str) -> str:
    """``/path/seatrial.yaml:LINE (agent `name`)``: where a named agent is written."""
    if folder is None or not (folder / CONFIG_FILE).is_file():
        return f"{CONFIG_FILE} (agent `{name}`)"
    file = folder / CONFIG_FILE
    text, _ = read_text(file, str(file))
    line = parse_yaml(text or "", str(file)).locator.line(("agents", name))
    shown = f"{file}:{line}" if line else str(file)
    return f"{shown} (agent `{name}`)"


def model_settings(entry: Mapping[str, Any], name: str, where: str) -> ModelAgentSettings:
    """The model-agent keys of a named agent's entry, checked."""
    given = {key: entry[key] for key in MODEL_AGENT_KEYS if key in entry}
    try:
        return ModelAgentSettings.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "agent"
        raise AgentSpecError(
            _("{where}: {key}: {why}; see docs/agents.md (Model agents)").format(
                where=where, key=key, why=first["msg"]
            )
        ) from exc


def check_not_model_keys(
    entry: Mapping[str, Any], spec: str, folder: Path | None, name: str
) -> None:
    """A non-model agent given model-agent keys: say so rather than ignore them."""
    given = {key: entry[key] for key in MODEL_AGENT_KEYS if key in entry}
    keys = [key for key, value in given.items() if value != _DEFAULTS[key]]
    if keys:
        raise AgentSpecError(
            _(
                "{where}: {keys} apply to `model:NAME` agents only, not to `{spec}`; remove "
                "them or make the spec model:NAME"
            ).format(where=where_in_config(folder, name), keys=", ".join(keys), spec=spec)
        )


def model_agent(
    spec: str,
    *,
    entry: Mapping[str, Any] | None,
    name: str | None,
    models: Mapping[str, Any] | None,
    base_dir: Path,
    where: str | None,
    timeout_s: float | None,
) -> ModelAgent:
    """The model agent of ``spec``; ``models`` (seatrial.yaml ``models:``), when given, must
    hold its model."""
    model = spec.removeprefix(MODEL_PREFIX).strip()
    shown = where or f"--agent {spec}"
    config: Any = None
    if models is not None:
        config = models.get(model)
        if config is None:
            known = sorted(models)
            close = difflib.get_close_matches(model, known, n=1)
            said = (
                _(
                    "{where}: no model `{model}` under `models:` in {file} (known: {known}). "
                    "Did you mean `model:{close}`? Add it there, e.g. `{example}` "
                    "(see docs/gateway.md)"
                )
                if close
                else _(
                    "{where}: no model `{model}` under `models:` in {file} (known: {known}). "
                    "Add it there, e.g. `{example}` (see docs/gateway.md)"
                )
            )
            example = "models: {" + model + ": {provider: openai, model: MODEL_ID, base_url: URL}}"
            raise AgentSpecError(
                said.format(
                    where=shown,
                    model=model,
                    file=CONFIG_FILE,
                    known=", ".join(known) or _("none"),
                    close=close[0] if close else "",
                    example=example,
                )
            )
    settings = model_settings(entry, name or spec, shown) if entry is not None else None
    return ModelAgent(
        spec,
        settings,
        name=name,
        base_dir=base_dir,
        model_id=getattr(config, "model", None),
        where=shown,
        timeout_s=timeout_s,
    )
