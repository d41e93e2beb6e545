"""The sticky pull-request comment: posted once, updated after, the job summary when GitHub
will not take it; against a fake GitHub API served on 127.0.0.1."""

from __future__ import annotations

import json

import httpx
import pytest

from seatrial.errors import InputError, SeatrialError
from seatrial.notify import GITHUB_COMMENT_LIMIT, post_sticky_comment
from tests.notify.fake_github import FakeGitHub, pull_request_event

TOKEN = "ghs_fake0token0that0must0never0show"


def environ(api_url: str, tmp_path, **extra: str) -> dict[str, str]:
    return {
        "GITHUB_API_URL": api_url,
        "GITHUB_TOKEN": TOKEN,
        "GITHUB_REPOSITORY": "octo/agent",
        "GITHUB_EVENT_PATH": str(pull_request_event(tmp_path, 7)),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        **extra,
    }


def test_posts_one_comment_then_updates_it_and_leaves_other_comments_alone(tmp_path):
    with FakeGitHub(TOKEN) as fake:
        other = fake.add("LGTM <!-- seatrial -->")
        env = environ(fake.url, tmp_path)
        first = post_sticky_comment("## run 1\n", environ=env)
        second = post_sticky_comment("## run 2\n", environ=env)
    assert (first.action, second.action) == ("created", "updated")
    assert first.url == second.url
    assert fake.bodies() == ["LGTM <!-- seatrial -->", "<!-- seatrial -->\n## run 2\n"]
    assert fake.comments[other]["body"] == "LGTM <!-- seatrial -->"
    assert not (tmp_path / "summary.md").exists()


def test_the_marker_comment_on_a_later_page_is_updated_not_duplicated(tmp_path):
    with FakeGitHub(TOKEN, page_size=2) as fake:
        for n in range(3):
            fake.add(f"review {n}")
        sticky = fake.add("<!-- seatrial ci pr -->\nold verdict")
        fake.add("review 4")
        outcome = post_sticky_comment(
            "<!-- seatrial ci pr -->\nnew verdict", environ=environ(fake.url, tmp_path)
        )
    assert outcome.action == "updated"
    assert fake.comments[sticky]["body"] == "<!-- seatrial ci pr -->\nnew verdict"
    assert len(fake.comments) == 5
    assert sum("page=3" in path for _, path in fake.requests) == 1


def test_each_marker_is_its_own_comment(tmp_path):
    with FakeGitHub(TOKEN) as fake:
        nightly = fake.add("<!-- seatrial ci nightly -->\nnightly verdict")
        quoted = fake.add("> <!-- seatrial ci pr -->\n> quoted by a reviewer")
        outcome = post_sticky_comment(
            "<!-- seatrial ci pr -->\npr verdict", environ=environ(fake.url, tmp_path)
        )
    assert outcome.action == "created"
    assert fake.comments[nightly]["body"] == "<!-- seatrial ci nightly -->\nnightly verdict"
    assert fake.comments[quoted]["body"].startswith("> <!-- seatrial ci pr -->")
    assert fake.bodies()[-1] == "<!-- seatrial ci pr -->\npr verdict"


def test_a_copied_marker_the_token_may_not_edit_does_not_block_the_comment(tmp_path):
    with FakeGitHub(TOKEN) as fake:
        copied = fake.add("<!-- seatrial -->\nnot Seatrial's", user="someone")
        fake.protected.add(copied)
        env = environ(fake.url, tmp_path)
        first = post_sticky_comment("run 1", environ=env)
        second = post_sticky_comment("run 2", environ=env)
    assert (first.action, second.action) == ("created", "updated")
    assert fake.bodies() == ["<!-- seatrial -->\nnot Seatrial's", "<!-- seatrial -->\nrun 2"]


def test_a_read_only_token_writes_the_job_summary_instead(tmp_path):
    with FakeGitHub(TOKEN, read_only=True) as fake:
        outcome = post_sticky_comment("## verdict\n", environ=environ(fake.url, tmp_path))
    assert outcome.action == "summary"
    assert "fork" in outcome.reason and "403" in outcome.reason
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert "## verdict" in summary and "did not comment" in summary
    assert fake.comments == {}
    assert TOKEN not in summary + outcome.reason


def test_an_event_without_a_name_is_said_as_this_event_not_the_this_event(tmp_path):
    push = tmp_path / "push.json"
    push.write_text(json.dumps({"ref": "refs/heads/main", "after": "abc"}), encoding="utf-8")
    with FakeGitHub(TOKEN) as fake:
        env = environ(fake.url, tmp_path, GITHUB_EVENT_PATH=str(push), GITHUB_EVENT_NAME="")
        outcome = post_sticky_comment("## verdict\n", environ=env)
    assert outcome.action == "summary"
    assert "this event is not a pull request" in outcome.reason
    assert "the this event" not in outcome.reason


def test_a_push_event_writes_the_job_summary_and_calls_no_api(tmp_path):
    push = tmp_path / "push.json"
    push.write_text(json.dumps({"ref": "refs/heads/main", "after": "abc"}), encoding="utf-8")
    with FakeGitHub(TOKEN) as fake:
        env = environ(fake.url, tmp_path, GITHUB_EVENT_PATH=str(push), GITHUB_EVENT_NAME="push")
        outcome = post_sticky_comment("## verdict\n", environ=env)
    assert outcome.action == "summary" and "push event is not a pull request" in outcome.reason
    assert fake.requests == []
    assert "## verdict" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_a_comment_on_a_pull_request_counts_as_its_event(tmp_path):
    event = tmp_path / "issue_comment.json"
    event.write_text(
        json.dumps({"issue": {"number": 7, "pull_request": {"url": "..."}}}), encoding="utf-8"
    )
    with FakeGitHub(TOKEN) as fake:
        outcome = post_sticky_comment(
            "x", environ=environ(fake.url, tmp_path, GITHUB_EVENT_PATH=str(event))
        )
    assert outcome.action == "created"


def test_without_a_token_nothing_is_sent(tmp_path):
    with FakeGitHub(TOKEN) as fake:
        env = environ(fake.url, tmp_path)
        del env["GITHUB_TOKEN"]
        outcome = post_sticky_comment("## verdict\n", environ=env)
    assert outcome.action == "summary" and "GITHUB_TOKEN" in outcome.reason
    assert fake.requests == []


def test_a_server_error_fails_with_a_message_that_hides_the_token(tmp_path):
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.headers["Authorization"] == f"Bearer {TOKEN}"
        return httpx.Response(502, json={"message": "Server Error"})

    env = environ("https://api.github.test", tmp_path)
    with pytest.raises(SeatrialError) as caught:
        post_sticky_comment("x", environ=env, transport=httpx.MockTransport(answer))
    assert "502" in str(caught.value) and TOKEN not in str(caught.value)
    assert not isinstance(caught.value, InputError)


def test_a_next_link_to_another_host_is_not_followed_with_the_token(tmp_path):
    hosts = []

    def answer(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        if request.method == "GET":
            link = '<https://elsewhere.test/steal?page=2>; rel="next"'
            return httpx.Response(200, json=[], headers={"Link": link})
        return httpx.Response(201, json={"id": 1, "html_url": "https://github.test/c/1"})

    env = environ("https://api.github.test", tmp_path)
    outcome = post_sticky_comment("x", environ=env, transport=httpx.MockTransport(answer))
    assert outcome.action == "created"
    assert set(hosts) == {"api.github.test"}


def test_a_body_over_githubs_limit_is_cut_to_fit(tmp_path):
    body = "".join(f"line {n} {'x' * 60}\n" for n in range(2000))
    with FakeGitHub(TOKEN) as fake:
        post_sticky_comment(body, environ=environ(fake.url, tmp_path))
    (posted,) = fake.bodies()
    assert len(posted) <= GITHUB_COMMENT_LIMIT < len(body)
    assert posted.startswith("<!-- seatrial -->\nline 0 ") and "cut" in posted[-100:]


def test_a_marker_that_would_end_the_html_comment_is_refused(tmp_path):
    with pytest.raises(InputError, match="marker"):
        post_sticky_comment("x", marker="a --> b", environ={})
