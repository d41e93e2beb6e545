"""The judge's prompt templates: package files, versioned, identified by the hash of their text.

A template is a system part and a user part separated by a ``---USER---`` line, with
``$name`` placeholders (:class:`string.Template`), so the JSON shown in the instructions needs
no escaping. The hash covers the whole file: any edit makes a new prompt, and a calibration
made with the old one no longer vouches for it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from string import Template

from seatrial.errors import ConfigError
from seatrial.gateway import Message
from seatrial.i18n import gettext as _

_SPLIT = "---USER---"
PROMPT_KINDS = ("judge", "compare", "factuality")
"""The templates every prompt version ships: pointwise judging, pairwise comparison, claims."""


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt template file, parsed."""

    kind: str
    """``judge``, ``compare`` or ``factuality``."""
    version: str
    """The version, e.g. ``v1``."""
    text: str
    """The file's text, exactly as shipped."""

    @property
    def hash(self) -> str:
        """sha256 of the template text, hex: the key calibrations are stored under."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    def render(self, **values: str) -> list[Message]:
        """The system and user messages with every placeholder filled in.

        Raises:
            KeyError: a placeholder of the template was not given (a bug in the caller).
        """
        system, _sep, user = self.text.partition(_SPLIT)
        return [
            Message(role="system", content=Template(system.strip()).substitute(values)),
            Message(role="user", content=Template(user.strip()).substitute(values)),
        ]


def available_versions() -> list[str]:
    """Prompt versions shipped with Seatrial, oldest first."""
    folder = resources.files("seatrial.judge").joinpath("prompts")
    names = [entry.name for entry in folder.iterdir() if entry.name.startswith("judge_")]
    versions = [name.removeprefix("judge_").removesuffix(".txt") for name in names]
    return sorted(versions, key=lambda v: int(v[1:]) if v[1:].isdigit() else 0)


def load_prompt(kind: str, version: str) -> PromptTemplate:
    """The shipped template of ``kind`` at ``version``.

    Raises:
        ConfigError: no such version is shipped (the message lists the ones that are).
    """
    if kind not in PROMPT_KINDS:
        raise ValueError(f"unknown prompt kind {kind!r}; expected one of {PROMPT_KINDS}")
    entry = resources.files("seatrial.judge").joinpath("prompts", f"{kind}_{version}.txt")
    if not entry.is_file():
        shipped = ", ".join(available_versions()) or _("none")
        raise ConfigError(
            _(
                "judge.prompt_version {version!r} is not shipped with this Seatrial "
                "(shipped: {shipped}); set judge.prompt_version in seatrial.yaml to one of them"
            ).format(version=version, shipped=shipped)
        )
    text = entry.read_text(encoding="utf-8")
    if _SPLIT not in text:
        raise ConfigError(
            _(
                "the prompt template {file} has no {split} line; "
                "reinstall Seatrial (the package files are damaged)"
            ).format(file=f"{kind}_{version}.txt", split=_SPLIT)
        )
    return PromptTemplate(kind=kind, version=version, text=text)
