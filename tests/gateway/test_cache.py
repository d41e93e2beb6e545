"""The response cache: on for the judge, off for the agent, never shared across repeats."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from seatrial.errors import GatewayError
from seatrial.gateway import _cache
from seatrial.gateway._cache import ResponseCache
from seatrial.gateway._config import CacheConfig
from seatrial.gateway._prepared import normalised_request
from seatrial.gateway._types import ChatRequest, ChatResponse, ChatToolCall, Message, Usage

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}


def ask(text: str = "Is the refund policy 30 days?", **fields: object) -> ChatRequest:
    values: dict[str, object] = {
        "messages": [
            Message(role="system", content="You are a strict grader."),
            Message(role="user", content=text),
        ],
        "temperature": 0.0,
    }
    values.update(fields)
    return ChatRequest.model_validate(values)


def answer(text: str = "PASS", **fields: object) -> ChatResponse:
    values: dict[str, object] = {
        "message": Message(role="assistant", content=text),
        "usage": Usage(input_tokens=300, output_tokens=5),
        "cost_usd": 0.0008,
        "model": "judge",
        "provider_model": "gpt-4o-2024-08-06",
    }
    values.update(fields)
    return ChatResponse.model_validate(values)


@pytest.fixture
def cache() -> Iterator[ResponseCache]:
    with ResponseCache(CacheConfig()) as opened:
        yield opened


def test_judge_and_generation_calls_are_cached_by_default_agent_calls_are_not(
    cache: ResponseCache,
) -> None:
    assert cache.enabled_for(ask(purpose="judge"))
    assert cache.enabled_for(ask(purpose="generation"))
    assert not cache.enabled_for(ask(purpose="agent"))


def test_a_request_can_turn_the_cache_on_or_off_for_itself(cache: ResponseCache) -> None:
    assert cache.enabled_for(ask(purpose="agent", cache=True))
    assert not cache.enabled_for(ask(purpose="judge", cache=False))
    with ResponseCache(CacheConfig(judge=False, agent=True)) as configured:
        assert not configured.enabled_for(ask(purpose="judge"))
        assert configured.enabled_for(ask(purpose="agent"))


def test_the_same_judge_question_in_another_run_hits_the_cache(cache: ResponseCache) -> None:
    first = ask(purpose="judge", run_id="r1", case_id="refund", attempt=1)
    again = ask(purpose="judge", run_id="r2", case_id="refund", attempt=3, stream=True)
    cache.put(cache.key(first, "judge"), answer())
    hit = cache.get(cache.key(again, "judge"))
    assert hit is not None
    assert hit.message.content == "PASS"
    assert hit.cached is True
    assert hit.cost_usd == 0.0
    assert hit.usage == Usage(input_tokens=300, output_tokens=5)


def test_a_different_question_model_or_parameter_misses(cache: ResponseCache) -> None:
    base = ask(purpose="judge")
    cache.put(cache.key(base, "judge"), answer())
    assert (
        cache.get(cache.key(ask("Is the refund policy 60 days?", purpose="judge"), "judge")) is None
    )
    assert cache.get(cache.key(base, "judge-mini")) is None
    assert cache.get(cache.key(ask(purpose="judge", temperature=0.7), "judge")) is None
    assert cache.get(cache.key(ask(purpose="judge", tools=[WEATHER_TOOL]), "judge")) is None
    assert cache.get(cache.key(ask(purpose="judge", seed=7), "judge")) is None


def test_repeats_of_one_case_never_share_a_cached_agent_answer() -> None:
    with ResponseCache(CacheConfig(agent=True)) as cache:
        first = ask(purpose="agent", run_id="r1", case_id="refund", attempt=1)
        cache.put(cache.key(first, "gpt4o"), answer("Refunds take 30 days."))
        assert cache.get(cache.key(first, "gpt4o")) is not None
        for repeat in (
            ask(purpose="agent", run_id="r1", case_id="refund", attempt=2),
            ask(purpose="agent", run_id="r2", case_id="refund", attempt=1),
        ):
            assert cache.get(cache.key(repeat, "gpt4o")) is None


def test_repeats_share_agent_answers_only_when_asked_to() -> None:
    config = CacheConfig(agent=True, share_across_repeats=True)
    with ResponseCache(config) as cache:
        first = ask(purpose="agent", run_id="r1", case_id="refund", attempt=1)
        cache.put(cache.key(first, "gpt4o"), answer("Refunds take 30 days."))
        repeat = ask(purpose="agent", run_id="r1", case_id="refund", attempt=2)
        hit = cache.get(cache.key(repeat, "gpt4o"))
        assert hit is not None and hit.message.content == "Refunds take 30 days."


def conversation(call_id: str) -> ChatRequest:
    return ask(
        purpose="judge",
        tools=[WEATHER_TOOL],
        messages=[
            Message(role="user", content="Weather in Paris?"),
            Message(
                role="assistant",
                tool_calls=[
                    ChatToolCall(id=call_id, name="get_weather", arguments='{"city":"Paris"}')
                ],
            ),
            Message(role="tool", tool_call_id=call_id, content="18C, cloudy"),
        ],
    )


def test_tool_call_ids_the_provider_made_up_do_not_change_the_key(cache: ResponseCache) -> None:
    assert cache.key(conversation("call_Xy12"), "m") == cache.key(conversation("call_Q9zz"), "m")
    normal = normalised_request(conversation("call_Xy12"))
    assert normal["messages"][1]["tool_calls"][0]["id"] == normal["messages"][2]["tool_call_id"]


def test_a_file_cache_is_shared_by_every_process_of_the_project(tmp_path: Path) -> None:
    path = tmp_path / ".seatrial" / "cache.db"
    request = ask(purpose="judge")
    with ResponseCache(CacheConfig(), path) as writer, ResponseCache(CacheConfig(), path) as reader:
        writer.put(writer.key(request, "judge"), answer("FAIL: wrong policy"))
        hit = reader.get(reader.key(request, "judge"))
    assert hit is not None and hit.message.content == "FAIL: wrong policy"
    with ResponseCache(CacheConfig(), path) as reopened:
        assert reopened.get(reopened.key(request, "judge")) is not None
        assert reopened.clear() == 1
        assert reopened.get(reopened.key(request, "judge")) is None


def test_entries_older_than_the_ttl_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [1_000.0]
    monkeypatch.setattr(_cache, "time", SimpleNamespace(time=lambda: clock[0]))
    with ResponseCache(CacheConfig(ttl_s=60)) as cache:
        key = cache.key(ask(purpose="judge"), "judge")
        cache.put(key, answer())
        clock[0] += 59
        assert cache.get(key) is not None
        clock[0] += 2
        assert cache.get(key) is None


def test_an_answer_shaped_by_an_injected_fault_is_never_cached(cache: ResponseCache) -> None:
    key = cache.key(ask(purpose="judge"), "judge")
    cache.put(key, answer("", fault="empty"))
    assert cache.get(key) is None


def test_a_cache_path_that_cannot_be_a_database_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "cache.db").mkdir()
    with pytest.raises(GatewayError, match="gateway.cache"):
        ResponseCache(CacheConfig(), tmp_path / "cache.db")
