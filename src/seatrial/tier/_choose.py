"""What a tier run is made of: the tier's settings, the branch compared with, each baseline."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seatrial.case import parse_yaml, read_text
from seatrial.compare import LATEST_PASSING, gate_settings, resolve_run_ref
from seatrial.config import CONFIG_FILE, Config, TierConfig
from seatrial.errors import ConfigError, Problem, RunNotFound
from seatrial.i18n import gettext as _
from seatrial.run import pull_request_target
from seatrial.store import Store

DEFAULT_TARGET = "main"
"""The branch compared with when neither ``--base``, a pull request, nor git names one."""


def tier_config(config: Config, name: str) -> TierConfig:
    """``tiers: NAME`` of seatrial.yaml.

    Raises:
        ConfigError: no such tier; the message names the file, the line of ``tiers:`` and the
            tiers there are.
    """
    tier = config.tiers.get(name)
    if tier is not None:
        return tier
    shown = str(config.file or CONFIG_FILE)
    known = ", ".join(sorted(config.tiers))
    message = (
        _("no tier {name} under `tiers:` (known: {known})").format(name=repr(name), known=known)
        if known
        else _("no tier {name} under `tiers:` (the file names no tiers)").format(name=repr(name))
    )
    fix = (
        _("run one of them, or add `{name}:` under `tiers:`").format(name=name)
        if known
        else _(
            "add e.g. `tiers: {{{name}: {{suites: [suites/], repeats: 1}}}}` (docs/ci.md)"
        ).format(name=name)
    )
    raise ConfigError(Problem(shown, _tiers_line(config.file), message, fix).said(_))


def _tiers_line(file: Path | None) -> int | None:
    """The line of ``tiers:`` in seatrial.yaml (None without one)."""
    if file is None:
        return None
    text, _problems = read_text(file, str(file))
    return parse_yaml(text or "", str(file)).locator.line(("tiers",))


def target_branch(
    base: str | None, branch: str | None, env: Mapping[str, str] | None = None
) -> str:
    """The branch whose runs are the baselines: ``base``, else the branch a pull request goes
    into, else the branch being built (a push to ``main`` compares with ``main``'s previous
    passing run), else ``main``."""
    return base or pull_request_target(env) or branch or DEFAULT_TARGET


def tier_gates(config: Config, name: str, tier: TierConfig) -> str | Path | dict[str, Any] | None:
    """The gates a tier's runs store: its gates file, or the gates written under it (recorded
    as coming from ``tiers: NAME``); None keeps each suite's own."""
    if isinstance(tier.gates, str):
        return config.project_dir / tier.gates
    if tier.gates is not None:
        return gate_settings(list(tier.gates), f"tier:{name}:{config.file}")
    return None


def baseline_on(store: Store, suite: str, branch: str) -> str | None:
    """The latest passing run of ``suite`` made from ``branch``; None when there is none."""
    try:
        return resolve_run_ref(store, LATEST_PASSING, suite=suite, branch=branch)
    except RunNotFound:
        return None
