"""Routing: explicit names, rules in order, the default, complexity escalation and downgrade."""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial.errors import ConfigError, GatewayError
from seatrial.gateway._config import (
    ComplexityRouting,
    GatewayConfig,
    ModelConfig,
    RoutingConfig,
    RoutingRule,
)
from seatrial.gateway._routing import RouteDecision, Router, complexity_score
from seatrial.gateway._types import ChatRequest, ChatToolCall, Message

MODELS = {
    "small": ModelConfig(name="small", model="gpt-4o-mini-2024-07-18"),
    "big": ModelConfig(name="big", model="gpt-4o-2024-08-06"),
    "coder": ModelConfig(name="coder", model="qwen2.5-coder-32b"),
    "claude": ModelConfig(name="claude", provider="anthropic", model="claude-sonnet-4-5"),
}


def config(**routing: object) -> GatewayConfig:
    return GatewayConfig(models=MODELS, routing=RoutingConfig.model_validate(routing))


def ask(text: str, **fields: object) -> ChatRequest:
    return ChatRequest.model_validate({"messages": [Message(role="user", content=text)], **fields})


HARD_CODE_QUESTION = (
    "Why does this fail under load?\n```python\ndef merge(a, b):\n    return a | b\n```\n"
    + "The service logs show timeouts. " * 300
)


def test_explicit_model_wins_over_rules_default_and_complexity() -> None:
    router = Router(
        config(
            default="small",
            rules=[RoutingRule(name="code", model="coder", keywords=["refund"])],
            complexity=ComplexityRouting(escalate_above=0.0, escalate_to="big"),
        )
    )

    decision = router.route(ask("refund please", model="claude"))

    assert decision == RouteDecision(model="claude", rule="explicit", complexity=None)


def test_request_naming_the_upstream_model_id_routes_to_its_configured_name() -> None:
    decision = Router(config()).route(ask("hi", model="gpt-4o-2024-08-06"))

    assert (decision.model, decision.rule) == ("big", "explicit")


def test_unknown_explicit_model_is_an_error_listing_the_configured_ones() -> None:
    with pytest.raises(GatewayError, match="`gpt-5`.*not configured.*big, claude, coder, small"):
        Router(config(default="small")).route(ask("hi", model="gpt-5"))


def test_first_matching_rule_chooses_and_is_recorded_by_name() -> None:
    router = Router(
        config(
            default="small",
            rules=[
                RoutingRule(name="coding", model="coder", task="code"),
                RoutingRule(name="careful", model="big", keywords=["contract"]),
            ],
        )
    )

    both = router.route(ask("review this contract", task="code"))
    keyword_only = router.route(ask("review this contract", task="summarize"))

    assert (both.model, both.rule) == ("coder", "coding")
    assert (keyword_only.model, keyword_only.rule) == ("big", "careful")


def test_keywords_match_the_last_user_message_case_insensitively() -> None:
    router = Router(
        config(default="small", rules=[RoutingRule(name="legal", model="big", keywords=["GDPR"])])
    )
    earlier_mention = ChatRequest(
        messages=[
            Message(role="user", content="what does gdpr say?"),
            Message(role="assistant", content="It is a regulation."),
            Message(role="user", content="thanks, and the weather?"),
        ]
    )

    assert router.route(ask("Explain gdpr article 17")).model == "big"
    assert router.route(earlier_mention).rule == "default"


def test_a_rule_with_task_and_keywords_needs_both() -> None:
    router = Router(
        config(
            default="small",
            rules=[RoutingRule(name="py", model="coder", task="code", keywords=["python"])],
        )
    )

    assert router.route(ask("python loops", task="code")).rule == "py"
    assert router.route(ask("rust loops", task="code")).rule == "default"
    assert router.route(ask("python loops", task="chat")).rule == "default"


def test_classifier_hook_from_a_file_routes_the_requests_it_accepts(tmp_path: Path) -> None:
    hook = tmp_path / "hooks.py"
    hook.write_text(
        "def wants_claude(request):\n    return len(request.messages) > 1\n", encoding="utf-8"
    )
    router = Router(
        config(
            default="small",
            rules=[
                RoutingRule(name="long", model="claude", classifier=f"python:{hook}:wants_claude")
            ],
        )
    )
    two = ChatRequest(
        messages=[Message(role="system", content="be brief"), Message(role="user", content="hi")]
    )

    assert router.route(two) == RouteDecision("claude", "long", None)
    assert router.route(ask("hi")).rule == "default"


def test_classifier_hook_from_an_importable_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "seatrial_test_route_hooks.py").write_text(
        "def is_refund(request):\n    return request.task == 'refund'\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    router = Router(
        config(
            rules=[
                RoutingRule(
                    name="refunds",
                    model="big",
                    classifier="python:seatrial_test_route_hooks:is_refund",
                )
            ]
        )
    )

    assert router.route(ask("money back", task="refund")).model == "big"


def test_broken_classifier_spec_fails_when_the_router_is_built() -> None:
    with pytest.raises(ConfigError, match="cannot import `no_such_module_xyz`"):
        Router(
            config(
                rules=[RoutingRule(name="r", model="big", classifier="python:no_such_module_xyz:f")]
            )
        )
    with pytest.raises(ConfigError, match="not a hook spec"):
        Router(config(rules=[RoutingRule(name="r", model="big", classifier="just_a_name")]))


def test_classifier_that_raises_is_a_gateway_error_naming_the_rule(tmp_path: Path) -> None:
    hook = tmp_path / "bad_hooks.py"
    hook.write_text("def boom(request):\n    raise KeyError('task')\n", encoding="utf-8")
    router = Router(
        config(rules=[RoutingRule(name="fragile", model="big", classifier=f"python:{hook}:boom")])
    )

    with pytest.raises(GatewayError, match="routing rule `fragile`.*KeyError"):
        router.route(ask("hi"))


def test_default_serves_requests_no_rule_matches() -> None:
    router = Router(
        config(default="small", rules=[RoutingRule(name="code", model="coder", task="code")])
    )

    assert router.route(ask("hello")) == RouteDecision("small", "default", None)


def test_no_model_named_matched_or_defaulted_is_an_error_saying_what_to_set() -> None:
    router = Router(config(rules=[RoutingRule(name="code", model="coder", task="code")]))

    with pytest.raises(GatewayError, match="routing.default"):
        router.route(ask("hello"))


def test_complexity_escalates_hard_requests_and_downgrades_easy_ones() -> None:
    router = Router(
        config(
            default="claude",
            complexity=ComplexityRouting(
                escalate_above=0.5, escalate_to="big", downgrade_below=0.1, downgrade_to="small"
            ),
        )
    )

    hard = router.route(ask(HARD_CODE_QUESTION, tools=[_tool(f"t{i}") for i in range(8)]))
    easy = router.route(ask("hi"))
    middling = router.route(ask("Summarise the attached notes. " * 100))

    assert (hard.model, hard.rule) == ("big", "complexity:escalate")
    assert hard.complexity is not None and hard.complexity > 0.5
    assert (easy.model, easy.rule) == ("small", "complexity:downgrade")
    assert (middling.model, middling.rule) == ("claude", "default")
    assert middling.complexity is not None


def test_complexity_keeps_the_rule_name_when_it_would_not_change_the_model() -> None:
    router = Router(
        config(
            rules=[RoutingRule(name="coding", model="big", task="code")],
            complexity=ComplexityRouting(escalate_above=0.1, escalate_to="big"),
        )
    )

    decision = router.route(ask(HARD_CODE_QUESTION, task="code"))

    assert (decision.model, decision.rule) == ("big", "coding")


def test_custom_scorer_decides_and_must_return_a_score_between_0_and_1(tmp_path: Path) -> None:
    hook = tmp_path / "scorers.py"
    hook.write_text(
        "def by_task(request):\n    return 0.9 if request.task == 'plan' else 0.5\n"
        "def too_big(request):\n    return 7\n",
        encoding="utf-8",
    )

    def router(function: str) -> Router:
        return Router(
            config(
                default="small",
                complexity=ComplexityRouting(
                    scorer=f"python:{hook}:{function}", escalate_above=0.8, escalate_to="big"
                ),
            )
        )

    assert router("by_task").route(ask("hi", task="plan")) == RouteDecision(
        "big", "complexity:escalate", 0.9
    )
    assert router("by_task").route(ask("hi")).model == "small"
    with pytest.raises(GatewayError, match="returned 7; it must return a number from 0 to 1"):
        router("too_big").route(ask("hi"))


def _tool(name: str) -> dict[str, object]:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def test_complexity_score_rises_with_length_turns_tools_and_code() -> None:
    base = complexity_score(ask("Please summarise my week."))
    longer = complexity_score(ask("Please summarise my week. " * 200))
    with_tools = complexity_score(ask("Please summarise my week.", tools=[_tool("a"), _tool("b")]))
    with_code = complexity_score(ask("Please fix:\n```\nconst x = f(1);\n```"))
    conversation = complexity_score(
        ChatRequest(
            messages=[
                Message(role="user" if i % 2 == 0 else "assistant", content="Please go on.")
                for i in range(9)
            ]
        )
    )

    assert 0.0 <= base < 0.05
    assert longer > base
    assert with_tools > base
    assert with_code > base
    assert conversation > base
    assert complexity_score(ask(HARD_CODE_QUESTION, tools=[_tool("a")] * 8)) <= 1.0


def test_prose_that_reads_a_little_like_code_does_not_score_as_code() -> None:
    plain = complexity_score(ask("I want to return my shoes."))
    prose = complexity_score(ask("let me know\nimport duties apply\nreturn my order"))
    code = complexity_score(ask("def refund(order):\n    return order.total\n"))
    imports = complexity_score(ask("import os\nfrom pathlib import Path\n"))

    assert prose - plain < 0.01
    assert code - plain > 0.05
    assert imports - plain > 0.05


def test_tool_calls_and_tool_results_count_towards_complexity() -> None:
    plain = ask("book a table")
    with_tool_round = ChatRequest(
        messages=[
            *plain.messages,
            Message(
                role="assistant",
                tool_calls=[ChatToolCall(id="c1", name="book", arguments='{"people": 2}')],
            ),
            Message(role="tool", tool_call_id="c1", content='{"ok": true}'),
        ]
    )

    assert complexity_score(with_tool_round) > complexity_score(plain)
