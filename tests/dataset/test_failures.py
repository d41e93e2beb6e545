"""Failure clustering on runs made by the real runner and evaluator: a support agent with
planted failures (tests/dataset/failing_agent.py) runs through the python: adapter, so each
failed attempt carries the reason Seatrial's own checks write, with varied wording."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import seatrial
from seatrial.dataset import (
    CLUSTER_DISTANCE,
    DEFAULT_CLUSTER_DISTANCE,
    FailureCluster,
    FailureMember,
    cluster_failures,
    cluster_members,
    name_clusters,
)
from seatrial.gateway import Gateway, GatewayConfig
from seatrial.run import RunOptions
from seatrial.store import Store
from seatrial.testing import FakeOpenAI
from tests.gateway.conftest import model_for

AGENT = f"python:{Path(__file__).parent / 'failing_agent.py'}:planted"

PLANTED = """suite: support
cases:
  - {id: greeting, input: Hi, assertions: [{type: contains, value: help}]}
  - {id: loop-order, input: "Where is my order A1O01?", assertions: [{type: no_loop}]}
  - {id: loop-forecast, input: "Will it rain in Hangzhou tomorrow?", assertions: [{type: no_loop}]}
  - {id: loop-invoice, input: "Show me my invoices", assertions: [{type: no_loop}]}
  - {id: perm-refund, input: "Refund order A1001", permissions: {refund_order: deny}}
  - {id: perm-delete, input: "Close my account", allowed_tools: [lookup_order]}
  - {id: perm-voucher, input: "I want a voucher", permissions: {send_voucher: once}}
  - id: fab-order
    input: Send me a replacement
    assertions: [{type: business_rule, rule: no_fabricated_ids}]
  - id: fab-ticket
    input: I want to complain
    assertions: [{type: business_rule, rule: no_fabricated_ids}]
  - id: fab-refund
    input: Did my refund go through?
    assertions: [{type: business_rule, rule: no_fabricated_ids}]
"""

FORMATS = """suite: formats
cases:
  - {id: format-json, input: Order status as JSON please, assertions: [{type: is_json}]}
  - id: format-length
    input: Order status as JSON please
    assertions: [{type: is_json}, {type: length, max: 200}]
"""

CHINESE = """suite: chinese
cases:
  - {id: ticket-repair, input: 空调坏了，帮我报修, assertions: [{type: contains, value: 工单号}]}
  - {id: ticket-complaint, input: 我要投诉快递员, assertions: [{type: contains, value: 工单号}]}
  - {id: json-status, input: 用 JSON 返回订单状态, assertions: [{type: is_json}]}
"""


def run_suite(folder: Path, text: str, name: str) -> str:
    """Run a suite of the planted agent three times per case; the new run's id."""
    suite = folder / f"{name}.yaml"
    suite.write_text(text, encoding="utf-8")
    report = seatrial.run_suite(
        suite,
        AGENT,
        db=f"sqlite:///{folder / 'seatrial.db'}",
        project_dir=folder,
        options=RunOptions(repeats=3),
    )
    return report.info.run_id


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("failures")
    return {
        "db": f"sqlite:///{folder / 'seatrial.db'}",
        "planted": run_suite(folder, PLANTED, "planted"),
        "formats": run_suite(folder, FORMATS, "formats"),
        "chinese": run_suite(folder, CHINESE, "chinese"),
    }


@pytest.fixture
def store(runs: dict[str, Any]) -> Any:
    with Store.open(runs["db"]) as opened:
        yield opened


def members_of(cluster: FailureCluster) -> set[tuple[str, int]]:
    return {(member.case_id, member.attempt) for member in cluster.members}


def every(*case_ids: str) -> set[tuple[str, int]]:
    return {(case_id, attempt) for case_id in case_ids for attempt in (1, 2, 3)}


def test_three_planted_failure_kinds_become_three_clusters_with_the_right_members(store, runs):
    clusters = cluster_failures(store, runs["planted"])

    assert [c.failure_type for c in clusters] == [
        "hallucination",
        "permission_violation",
        "loop",
    ]  # largest first; the loop case passed its first attempt
    by_type = {cluster.failure_type: cluster for cluster in clusters}
    # The loop on a mistyped order id passed on attempt 1 (it found the order).
    loops = every("loop-forecast", "loop-invoice") | {("loop-order", 2), ("loop-order", 3)}
    assert members_of(by_type["loop"]) == loops
    assert members_of(by_type["permission_violation"]) == every(
        "perm-refund", "perm-delete", "perm-voucher"
    )
    assert members_of(by_type["hallucination"]) == every("fab-order", "fab-ticket", "fab-refund")
    assert [c.count for c in clusters] == [9, 9, 8]
    for cluster in clusters:
        assert cluster.example in cluster.members
        assert ("greeting", 1) not in members_of(cluster)


def test_a_cluster_label_is_a_phrase_naming_the_failed_check_and_its_tools_but_no_quoted_value(
    store, runs
):
    by_type = {c.failure_type: c.label for c in cluster_failures(store, runs["planted"])}

    # Three tools in each cluster: the two named most often (then by name), the third counted.
    assert (
        by_type["loop"] == "no_loop failed on `fetch_forecast`, `search_invoices` and 1 more tool"
    )
    assert by_type["permission_violation"] == (
        "permissions_respected failed on `delete_account`, `refund_order` and 1 more tool"
    )
    # Fabricated ids are quoted in the reasons too, but they are values, not tools.
    assert by_type["hallucination"] == "business_rule failed"


def test_two_different_checks_of_one_failure_type_split_into_two_clusters(store, runs):
    clusters = cluster_failures(store, runs["formats"])

    assert [c.failure_type for c in clusters] == ["format", "format"]
    assert sorted(members_of(c) for c in clusters) == sorted(
        [every("format-json"), every("format-length")]
    )
    assert sorted(c.label for c in clusters) == ["is_json failed", "length failed"]


def test_chinese_failures_of_two_checks_never_share_a_cluster_at_the_default_threshold(store, runs):
    clusters = cluster_failures(store, runs["chinese"])

    assert sorted(members_of(c) for c in clusters) == sorted(
        [every("ticket-repair", "ticket-complaint"), every("json-status")]
    )
    # Both checks fail with failure type `format`: the check, not the type, keeps them apart,
    # and the two differently worded replies that lack 工单号 stay together.
    assert {c.failure_type for c in clusters} == {"format"}
    assert sorted(c.check for c in clusters) == ['contains value="工单号"', "is_json"]


def test_the_same_check_with_another_value_is_another_cluster():
    members = [
        member(
            "a", "format", 'contains: the final reply: does not contain "工单号"', "已登记", "x"
        ),
        member(
            "b", "format", 'contains: the final reply: does not contain "工单号"', "已受理", "x"
        ),
        member("c", "format", 'contains: the final reply: does not contain "退款"', "已登记", "y"),
    ]

    clusters = cluster_members(members, threshold=2.0)

    assert sorted(sorted(m.case_id for m in c.members) for c in clusters) == [["a", "b"], ["c"]]


def test_the_threshold_decides_how_far_apart_one_checks_attempts_may_be(store, runs):
    default = cluster_failures(store, runs["planted"], runs["formats"])
    assert len(default) == 5  # the three planted kinds and the two format checks

    # Anything goes: one cluster per failed check, never one across checks (or types).
    loose = cluster_failures(store, runs["planted"], runs["formats"], threshold=1.5)
    assert sorted((c.failure_type, c.check) for c in loose) == [
        ("format", "is_json"),
        ("format", "length max=200"),
        ("hallucination", 'business_rule rule="no_fabricated_ids"'),
        ("loop", "no_loop"),
        ("permission_violation", "permissions_respected"),
    ]
    # Nothing merges unless identical in every part: each case's differently worded
    # attempts fall apart, the planted kinds into more than three clusters.
    strict = cluster_failures(store, runs["planted"], threshold=1e-6)
    assert len(strict) > 3
    assert CLUSTER_DISTANCE["static"] > 0


def test_a_failed_attempt_is_compared_with_a_passing_attempt_of_its_case(store, runs):
    members = {
        (m.case_id, m.attempt): m
        for cluster in cluster_failures(store, runs["planted"])
        for m in cluster.members
    }

    diverged = members[("loop-order", 2)].divergence
    assert diverged.startswith("extra step: lookup_order(")
    assert "FAILED (KeyError)" in diverged
    # No attempt of these cases passed (in this run or a previous one): nothing to diverge from.
    assert members[("loop-forecast", 1)].divergence == ""
    assert members[("perm-refund", 1)].divergence == ""


def test_a_run_without_failures_has_no_clusters(store, tmp_path):
    suite = tmp_path / "fine.yaml"
    suite.write_text(
        "suite: fine\ncases: [{id: greeting, input: Hi, assertions: "
        "[{type: contains, value: help}]}]\n",
        encoding="utf-8",
    )
    db = f"sqlite:///{tmp_path / 'seatrial.db'}"
    run_id = seatrial.run_suite(suite, AGENT, db=db, project_dir=tmp_path).info.run_id
    with Store.open(db) as fresh:
        assert cluster_failures(fresh, run_id) == []


def member(
    case_id: str, failure_type: str, reason: str, reply: str = "", check: str = ""
) -> FailureMember:
    return FailureMember("run", case_id, 1, "FAIL", failure_type, reason, reply, check=check)


def not_json(reply: str) -> FailureMember:
    reason = f'is_json: the final reply: is not JSON (Expecting value: line 1 column 1): "{reply}"'
    return member("not-json", "format", reason, reply)


def too_long(characters: int, reply: str) -> FailureMember:
    reason = f"length: the final reply: has {characters} characters, more than 200"
    return member("too-long", "format", reason, reply)


def test_failures_with_chinese_replies_are_clustered_with_the_multilingual_model():
    members = [
        not_json("订单已发货"),
        not_json("您的订单已经发出，预计周五到达"),
        not_json("已发货！"),
        too_long(358, '{"note": "感谢您的支持，我们会在每一步通知您"}'),
        too_long(293, '{"status": "已发货", "note": "我们会通知您"}'),
        too_long(228, '{"note": "感谢"}'),
    ]

    clusters = cluster_members(members)

    assert sorted(sorted({m.case_id for m in c.members}) for c in clusters) == [
        ["not-json"],
        ["too-long"],
    ]
    assert [c.count for c in clusters] == [3, 3]


class KeywordEmbedder:
    """Embeds a text as its counts of three words: a model that knows nothing else."""

    name = "keywords-for-tests"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = np.array(
            [[text.count(word) for word in ("loop", "json", "refund")] for text in texts],
            dtype=np.float32,
        )
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def test_attempts_a_model_cannot_read_are_kept_apart_not_an_error():
    members = [
        member("a", "format", "json json", "json"),
        member("b", "format", "json", "json json"),
        member("c", "format", "????", "????"),
        member("d", "format", "!!!!", "!!!!"),
    ]

    clusters = cluster_members(members, embedder=KeywordEmbedder())

    assert sorted(sorted(m.case_id for m in c.members) for c in clusters) == [
        ["a", "b"],
        ["c"],
        ["d"],
    ]
    assert DEFAULT_CLUSTER_DISTANCE == CLUSTER_DISTANCE["static"]


async def test_clusters_get_short_names_from_a_model_through_the_gateway(store, runs, tmp_path):
    clusters = cluster_failures(store, runs["planted"])

    def answer(body: dict[str, Any]) -> str:
        prompt = body["messages"][0]["content"]
        kind = next(line for line in prompt.splitlines() if line.startswith("Failure type:"))
        return {
            "Failure type: loop": '"Retries a failing tool forever."',
            "Failure type: permission_violation": "Uses tools without permission",
            "Failure type: hallucination": "Invents reference numbers\nextra line",
        }[kind]

    ledger = Store.open(f"sqlite:///{tmp_path / 'ledger.db'}")
    with FakeOpenAI(answer) as server, ledger:
        models = {"namer": model_for(server, name="namer")}
        gateway = Gateway(GatewayConfig(models=models), store=ledger)
        try:
            named = await name_clusters(clusters, gateway, "namer")
        finally:
            await gateway.aclose()
        requests = server.requests
        spent = ledger.spend_by_purpose()

    assert [c.name for c in named] == [
        "Invents reference numbers",
        "Uses tools without permission",
        "Retries a failing tool forever",
    ]
    assert [c.label for c in named] == [c.label for c in clusters]  # the label stays
    assert len(requests) == 3
    assert all(r.body["model"] == "fake-model-2024-01-01" for r in requests)
    assert list(spent) == ["generation"]  # the ledger books the calls as case generation


@pytest.mark.parametrize(
    ("reasons", "label"),
    [
        (["no_loop: `read_file` failed 3 times"], "no_loop failed on `read_file`"),
        (
            ["no_loop: `read_file` failed 3 times", "no_loop: `list_dir` failed 3 times"],
            "no_loop failed on `list_dir` and `read_file`",
        ),
        (["the agent did not finish within 60 s"], "timeout"),
        (["agent unreachable at `fetch` (ConnectError)"], "timeout on `fetch`"),
    ],
    ids=["one-tool", "two-tools", "no-check-no-tool", "no-check-one-tool"],
)
def test_a_label_names_one_or_two_tools_whole_and_the_type_when_no_check_failed(reasons, label):
    members = [member(f"case-{i}", "timeout", reason) for i, reason in enumerate(reasons)]

    (cluster,) = cluster_members(members, threshold=2.0)

    assert cluster.label == label
