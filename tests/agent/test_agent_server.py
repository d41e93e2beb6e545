"""seatrial.testing.AgentServer: the scripted agent-protocol server users test against."""

from __future__ import annotations

import httpx

from seatrial.testing import AgentServer, HttpReply


def test_a_mapping_script_answers_known_messages_and_500s_the_rest():
    with AgentServer({"hi": "hello", "raw": HttpReply(502, "bad gateway")}) as server:
        with httpx.Client() as client:
            hello = client.post(server.url, json={"session_id": "s1", "message": "hi"})
            raw = client.post(server.url, json={"session_id": "s1", "message": "raw"})
            unknown = client.post(server.url, json={"session_id": "s1", "message": "??"})
    body = hello.json()
    assert body["response"] == "hello"
    assert body["session_id"] == "s1"
    assert body["tools_called"] == [] and body["finished"] is True
    assert (raw.status_code, raw.text) == (502, "bad gateway")
    assert unknown.status_code == 500
    assert "no reply scripted for message '??'" in unknown.text
    assert [r.body["message"] for r in server.requests] == ["hi", "raw", "??"]


def test_a_script_that_raises_answers_500_naming_the_error():
    def script(request):
        raise KeyError("oops")

    with AgentServer(script, path="agent") as server:
        assert server.url.endswith("/agent")
        with httpx.Client() as client:
            answer = client.post(server.url, json={"message": "x"})
    assert answer.status_code == 500
    assert "KeyError" in answer.text


def test_after_stopping_nothing_listens_at_the_url():
    with AgentServer(lambda request: "x") as server:
        url = server.url
    with httpx.Client() as client:
        try:
            client.post(url, json={"message": "x"})
        except httpx.ConnectError:
            refused = True
        else:
            refused = False
    assert refused
