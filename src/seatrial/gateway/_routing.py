"""Choosing the model for a request: explicit name, routing rules, default, complexity."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from seatrial.errors import ConfigError, GatewayError
from seatrial.gateway._config import GatewayConfig, RoutingRule
from seatrial.gateway._types import ChatRequest, Message
from seatrial.i18n import gettext as _

_PREFIX = "python:"

# The default scorer saturates each signal at these sizes: beyond them a request is "as long",
# "as conversational" or "as tool-heavy" as it gets for routing purposes.
_LONG_PROMPT_CHARS = 8000
_MANY_TURNS = 10
_MANY_TOOLS = 8
# Each hit is a line that looks like code; prose ("let me know", "return my order") must not hit.
_CODE_HINTS = re.compile(
    r"```"
    r"|^\s*def\s+\w+\s*\("
    r"|^\s*class\s+\w+\s*[:(]"
    r"|^\s*import\s+[\w.]+\s*(?:$|,|as\s)"
    r"|^\s*from\s+[\w.]+\s+import\s"
    r"|^\s*(?:const|let|var)\s+\w+\s*="
    r"|^\s*function\s*\w*\s*\("
    r"|^\s*#include\s*<"
    r"|\bSELECT\b.+\bFROM\b"
    r"|[;{}]\s*$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class RouteDecision:
    """Which model a request goes to, and why."""

    model: str
    """The configured model name chosen."""
    rule: str
    """``explicit``, a routing rule's name, ``default``, ``complexity:escalate`` or
    ``complexity:downgrade``."""
    complexity: float | None
    """The complexity score when complexity routing looked at the request, else None."""


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    # Only text parts: an image's base64 says nothing about how hard the question is.
    return "\n".join(str(p.get("text", "")) for p in content if p.get("type") == "text")


def message_text(message: Message) -> str:
    """The text a message sends: its content plus any tool calls' names and arguments."""
    parts = [_text(message.content)]
    parts += [f"{call.name} {call.arguments}" for call in message.tool_calls]
    return "\n".join(p for p in parts if p)


def _last_user_text(request: ChatRequest) -> str:
    for message in reversed(request.messages):
        if message.role == "user":
            return _text(message.content)
    return ""


def complexity_score(request: ChatRequest) -> float:
    """How demanding a request looks, from 0 (trivial) to 1 (hard).

    Four signals, each saturating: prompt length (35%), conversation turns (20%), tools
    offered or already used (20%) and code in the last user message (25%).
    """
    chars = sum(len(message_text(m)) for m in request.messages)
    turns = sum(1 for m in request.messages if m.role in ("user", "assistant"))
    tool_use = len(request.tools or []) + sum(1 for m in request.messages if m.role == "tool")
    code_lines = len(_CODE_HINTS.findall(_last_user_text(request)))
    score = (
        0.35 * min(1.0, chars / _LONG_PROMPT_CHARS)
        + 0.20 * min(1.0, max(0, turns - 1) / (_MANY_TURNS - 1))
        + 0.20 * min(1.0, tool_use / _MANY_TOOLS)
        + 0.25 * min(1.0, code_lines / 3)
    )
    return round(min(1.0, max(0.0, score)), 4)


def load_hook(spec: str, what: str) -> Callable[..., Any]:
    """The function a ``python:module:function`` or ``python:path/file.py:function`` names."""
    module, target, name = _import_target(spec, what)
    function = getattr(module, name, None)
    if not callable(function):
        raise ConfigError(
            _("{what} `{spec}`: `{target}` has no function `{name}`").format(
                what=what, spec=spec, target=target, name=name
            )
        )
    return function  # type: ignore[no-any-return]


def load_object(spec: str, what: str) -> Any:
    """The object a ``python:module:name`` or ``python:path/file.py:name`` names."""
    module, target, name = _import_target(spec, what)
    if not hasattr(module, name):
        raise ConfigError(
            _("{what} `{spec}`: `{target}` has no `{name}`").format(
                what=what, spec=spec, target=target, name=name
            )
        )
    return getattr(module, name)


def _import_target(spec: str, what: str) -> tuple[ModuleType, str, str]:
    target, _colon, name = spec.removeprefix(_PREFIX).strip().rpartition(":")
    if not spec.startswith(_PREFIX) or not target or not name:
        raise ConfigError(
            _(
                "{what} `{spec}` is not a hook spec; write python:module:function "
                "or python:path/to/file.py:function"
            ).format(what=what, spec=spec)
        )
    try:
        if target.endswith(".py"):
            path = Path(target).resolve()
            module_name = f"seatrial_route_{path.stem}"
            module_spec = importlib.util.spec_from_file_location(module_name, path)
            if module_spec is None or module_spec.loader is None:
                raise ImportError(f"cannot load {path} as Python")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[module_name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(target)
    except (ImportError, OSError) as exc:
        raise ConfigError(
            _(
                "{what} `{spec}`: cannot import `{target}` ({error}); make it importable from "
                "the project folder or give the path to its .py file"
            ).format(what=what, spec=spec, target=target, error=exc)
        ) from exc
    return module, target, name


class Router:
    """Picks the configured model for each request and says which rule chose it.

    An explicit ``request.model`` wins. Otherwise the routing rules are tried in order (a
    rule matches when every condition it sets holds), then ``routing.default``; complexity
    routing may then escalate or downgrade that choice. Hooks are imported here, so a broken
    ``python:`` spec fails when the gateway starts rather than on the first call.
    """

    def __init__(self, config: GatewayConfig) -> None:
        self._config = config
        self._routing = config.routing
        self._classifiers: dict[str, Callable[..., Any]] = {
            rule.name: load_hook(rule.classifier, f"routing rule `{rule.name}` classifier")
            for rule in self._routing.rules
            if rule.classifier
        }
        complexity = self._routing.complexity
        self._scorer: Callable[..., Any] = complexity_score
        if complexity is not None and complexity.scorer:
            self._scorer = load_hook(complexity.scorer, "complexity scorer")

    def route(self, request: ChatRequest) -> RouteDecision:
        """The model for ``request``; GatewayError when nothing names one."""
        if request.model:
            return RouteDecision(self._explicit(request.model), "explicit", None)
        chosen: tuple[str, str] | None = None
        for rule in self._routing.rules:
            if self._matches(rule, request):
                chosen = (rule.model, rule.name)
                break
        if chosen is None and self._routing.default:
            chosen = (self._routing.default, "default")
        if chosen is None:
            raise GatewayError(
                "no model for this request: it names none, no routing rule matched and "
                "`gateway.routing.default` is not set; name a model in the request or set "
                "a default"
            )
        model, rule_name = chosen
        complexity = self._routing.complexity
        if complexity is None:
            return RouteDecision(model, rule_name, None)
        score = self._score(request)
        if (
            complexity.escalate_to
            and complexity.escalate_above is not None
            and score > complexity.escalate_above
            and complexity.escalate_to != model
        ):
            return RouteDecision(complexity.escalate_to, "complexity:escalate", score)
        if (
            complexity.downgrade_to
            and complexity.downgrade_below is not None
            and score < complexity.downgrade_below
            and complexity.downgrade_to != model
        ):
            return RouteDecision(complexity.downgrade_to, "complexity:downgrade", score)
        return RouteDecision(model, rule_name, score)

    def _explicit(self, name: str) -> str:
        models = self._config.models
        if name in models:
            return name
        # Agents behind the proxy often send the upstream id ("gpt-4o-2024-08-06"), not our
        # name for it; accept it when exactly one configured model pins that id.
        pinned = [m.name for m in models.values() if m.model == name]
        if len(pinned) == 1:
            return pinned[0]
        known = ", ".join(sorted(models)) or "none"
        raise GatewayError(
            f"the request names model `{name}`, which is not configured (configured: {known}); "
            "add it under `models:` or use one of those names"
        )

    def _matches(self, rule: RoutingRule, request: ChatRequest) -> bool:
        if rule.task and request.task != rule.task:
            return False
        if rule.keywords:
            text = _last_user_text(request).casefold()
            if not any(k.casefold() in text for k in rule.keywords):
                return False
        if rule.classifier:
            try:
                verdict = self._classifiers[rule.name](request)
            except Exception as exc:
                raise GatewayError(
                    f"routing rule `{rule.name}`: classifier `{rule.classifier}` raised "
                    f"{type(exc).__name__}: {exc}; fix the classifier"
                ) from exc
            if not verdict:
                return False
        return True

    def _score(self, request: ChatRequest) -> float:
        try:
            raw = self._scorer(request)
            score = float(raw)
        except Exception as exc:
            raise GatewayError(
                f"complexity scorer failed: {type(exc).__name__}: {exc}; it must take the "
                "request and return a number from 0 to 1"
            ) from exc
        if not 0.0 <= score <= 1.0:
            raise GatewayError(
                f"complexity scorer returned {raw!r}; it must return a number from 0 to 1"
            )
        return score
