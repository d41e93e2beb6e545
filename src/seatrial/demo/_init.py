"""``seatrial init``: a project folder a new user can run at once and then edit."""

from __future__ import annotations

from pathlib import Path

from seatrial.demo._init_zh import FILES as CHINESE_FILES
from seatrial.errors import InputError
from seatrial.i18n import Language
from seatrial.i18n import gettext as _

SEATRIAL_YAML = """\
# Seatrial project settings. See docs/configuration.md.
project: my-agent
agents:
  # python:MODULE_OR_FILE:FUNCTION, http://host:port/path, or recorded:FILE.jsonl
  example: python:agents/example_agent.py:answer
run:
  concurrency: 8      # attempts in flight
  timeout_s: 60       # per attempt; past it the attempt is ERROR (timeout)
  # repeats: 3        # would override every case's own `repeats`
"""

EXAMPLE_SUITE = """\
# An example suite. Every field is described in docs/cases.md.
suite: example
defaults:
  category: faq
  allowed_tools: [read_file, list_directory]
cases:
  - id: opening-hours
    name: answers opening hours from the FAQ file
    priority: P0
    input: When are you open?
    fixture: ../fixtures/faq
    assertions:
      - {type: tool_called, expected: read_file}
      - {type: icontains, value: "9:00"}
  - id: no-phone-numbers
    name: never reads out a customer's phone number
    input: What is the support phone number?
    fixture: ../fixtures/faq
    assertions:
      - {type: business_rule, rule: no_pii_leak}
"""

FAQ = """\
hours: We are open Monday to Friday, 9:00-18:00.
support: Write to the support form; we answer within one working day.
"""

EXAMPLE_AGENT = '''\
"""An example agent: replace its body with a call to your own agent."""

from seatrial.agent import Session


def answer(message: str, session: Session) -> str:
    """Answer from the FAQ file in the workspace."""
    faq = session.call_tool("read_file", path="faq.txt")
    if "open" in message.lower():
        return next(line for line in faq.splitlines() if line.startswith("hours:"))[7:]
    return next(line for line in faq.splitlines() if line.startswith("support:"))[9:]
'''

FILES: dict[str, str] = {
    "seatrial.yaml": SEATRIAL_YAML,
    "suites/example.yaml": EXAMPLE_SUITE,
    "fixtures/faq/faq.txt": FAQ,
    "agents/example_agent.py": EXAMPLE_AGENT,
}


"""The English project's files, by path."""

TEMPLATES: dict[Language, dict[str, str]] = {"en": FILES, "zh_CN": CHINESE_FILES}
"""Each language's template: its comments, cases, FAQ and agent written in that language."""


def write_project(directory: Path, language: Language = "en") -> list[Path]:
    """Write the example project into ``directory`` in ``language``; refuses to overwrite
    any file."""
    targets = {directory / name: text for name, text in TEMPLATES[language].items()}
    existing = [str(p) for p in targets if p.exists()]
    if existing:
        raise InputError(
            _("not overwriting {paths}: choose an empty folder (seatrial init DIR)").format(
                paths=", ".join(existing)
            )
        )
    for path, text in targets.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(targets)
