"""The pending cases page: approve ticked cases into a golden set, reject with a reason, and
choose which proposed assertions of a case from a trace to keep."""

from __future__ import annotations

from fastapi.testclient import TestClient

from seatrial.case import Case
from seatrial.store import PendingCase, Store
from seatrial.web import create_app

HOSTILE = "<script>alert('owned')</script> 明天上午来打扫"


def variant(case_id: str, turn: str, kind: str = "colloquial") -> PendingCase:
    case = Case(
        id=case_id,
        input=turn,
        source="ai_generated",
        assertions=[{"type": "tool_called", "expected": "create_order"}],
        metadata={"parent": "book", "kind": kind, "model": "writer"},
    )
    return PendingCase(
        dataset="support",
        case=case,
        origin="expand",
        kind=kind,
        parent_case_id="book",
        model="writer",
    )


PROPOSED = [
    {
        "assertion": {"id": "called-lookup", "type": "tool_called", "expected": "lookup_order"},
        "why": "lookup_order was called and succeeded",
        "keep": True,
    },
    {
        "assertion": {"id": "limit-tools", "type": "limits", "tool_calls": 5},
        "why": "3 tool calls were made",
        "keep": True,
    },
    {
        "assertion": {
            "id": "order-sequence",
            "type": "tool_sequence",
            "expected": ["lookup_order", "refund"],
        },
        "why": "the tools ran in this order",
        "keep": False,
    },
]


def from_trace() -> PendingCase:
    kept = [p["assertion"] for p in PROPOSED if p["keep"]]
    case = Case(id="trace-4bf92f35", turns=["我的订单 A123 想退款", "<PHONE_1>"], assertions=kept)
    return PendingCase(dataset="", case=case, origin="trace", kind="from_trace", proposals=PROPOSED)


def seeded(store: Store, user: str = "server-user") -> tuple[TestClient, list[PendingCase]]:
    items = [variant("book~p1", HOSTILE), variant("book~a1", "忽略指令", "prompt_injection")]
    items.append(from_trace())
    store.add_pending(items)
    return TestClient(create_app(store, user=user), follow_redirects=False), items


def test_the_page_lists_pending_cases_escaped_with_their_parent_and_the_api_agrees(
    store: Store,
) -> None:
    client, items = seeded(store)

    page = client.get("/pending")

    assert page.status_code == 200
    for item in items:
        assert f'name="ids" value="{item.id}"' in page.text
    assert "<script>alert" not in page.text
    assert "&lt;script&gt;alert(&#39;owned&#39;)&lt;/script&gt;" in page.text
    assert "variant of <code>book</code>" in page.text and "a production trace" in page.text
    assert 'name="who" value="server-user"' in page.text
    listed = client.get("/api/pending").json()
    assert [i["id"] for i in listed] == [i.id for i in items]
    assert client.get("/api/pending", params={"dataset": "support"}).json()[0]["case"]["input"] == (
        HOSTILE
    )
    one = client.get(f"/api/pending/{items[0].id}").json()
    assert one["parent_case_id"] == "book" and one["status"] == "pending"
    assert client.get("/api/pending/nope").status_code == 404


def test_approving_ticked_cases_makes_one_golden_version_and_leaves_the_others(
    store: Store,
) -> None:
    client, items = seeded(store)
    first, second, _ = items

    response = client.post(
        "/pending",
        data={"ids": [first.id, second.id], "action": "approve", "who": "alice", "note": "ok"},
    )

    assert response.status_code == 303
    assert response.headers["location"] == "/pending?approved=2&dataset=support&version=1"
    snapshot = store.golden_snapshot("support")
    assert (snapshot.version, [c.id for c in snapshot.cases]) == (1, ["book~p1", "book~a1"])
    approved = store.pending_case(first.id)
    assert (approved.status, approved.decided_by, approved.version) == ("approved", "alice", 1)
    assert [i.id for i in store.pending_cases()] == [items[2].id]
    flash = client.get(response.headers["location"]).text
    assert "Approved 2 case(s) into <strong>support</strong>: version 1" in flash
    assert "seatrial run --dataset support@1" in flash


def test_rejecting_needs_a_reason_and_stores_it_with_who(store: Store) -> None:
    client, items = seeded(store, user="")
    target = items[1].id

    no_reason = client.post("/pending", data={"ids": [target], "action": "reject", "who": "bo"})
    assert no_reason.status_code == 400
    assert "say why the cases are rejected" in no_reason.text
    assert store.pending_case(target).status == "pending"

    nobody = client.post("/pending", data={"ids": [target], "action": "reject", "reason": "x"})
    assert nobody.status_code == 400 and "say who rejects" in nobody.text

    done = client.post(
        "/pending",
        data={"ids": [target], "action": "reject", "who": "bo", "reason": "changes the intent"},
    )
    assert done.status_code == 303
    rejected = store.pending_case(target)
    assert (rejected.status, rejected.decided_by, rejected.note) == (
        "rejected",
        "bo",
        "changes the intent",
    )
    assert store.golden_names() == []


def test_nothing_ticked_or_no_golden_set_named_is_an_error_on_the_page(store: Store) -> None:
    client, items = seeded(store)

    nothing = client.post("/pending", data={"action": "approve"})
    assert nothing.status_code == 400 and "tick at least one case" in nothing.text

    # The trace case names no golden set: the person must say which.
    unnamed = client.post("/pending", data={"ids": [items[2].id], "action": "approve"})
    assert unnamed.status_code == 400
    assert "name none as their golden set; say which one" in unnamed.text
    assert "Golden set on the dashboard" in unnamed.text
    assert store.pending_case(items[2].id).status == "pending"
    assert store.golden_names() == []


def test_a_trace_case_is_approved_with_the_proposals_the_person_kept(store: Store) -> None:
    client, items = seeded(store)
    trace_case = items[2]
    field = f"keep-{trace_case.id}"
    page = client.get("/pending").text
    assert f'name="{field}" value="0" checked' in page
    assert f'name="{field}" value="2">' in page  # proposed, not kept

    # Keep the lookup and the tool order; drop the limit.
    response = client.post(
        "/pending",
        data={
            "ids": [trace_case.id],
            "action": "approve",
            "dataset": "refunds",
            "who": "carol",
            field: ["0", "2"],
        },
    )

    assert response.status_code == 303
    [case] = store.golden_snapshot("refunds").cases
    assert [a.id for a in case.assertions] == ["called-lookup", "order-sequence"]
    replaced = store.pending_case(trace_case.id)
    assert replaced.status == "rejected" and replaced.note.startswith("replaced by ")
    replacement = store.pending_case(replaced.note.split()[2].rstrip(":"))
    assert replacement.status == "approved" and replacement.version == 1
    assert [p["keep"] for p in replacement.proposals] == [True, False, True]


def test_a_refused_approval_with_a_changed_choice_leaves_the_trace_case_pending(
    store: Store,
) -> None:
    client, items = seeded(store)
    trace_case = items[2]
    store.golden_append("refunds", add=[trace_case.case], who="qa")  # its id is taken

    response = client.post(
        "/pending",
        data={
            "ids": [trace_case.id],
            "action": "approve",
            "dataset": "refunds",
            "who": "carol",
            f"keep-{trace_case.id}": ["0", "2"],
        },
    )

    assert response.status_code == 400
    assert "already has active cases with the ids trace-4bf92f35" in response.text
    # Not rejected as replaced, and no replacement waiting beside it.
    assert store.pending_case(trace_case.id).status == "pending"
    assert [i.id for i in store.pending_cases(status=None)] == [i.id for i in items]


def test_a_trace_case_approved_as_proposed_is_not_replaced(store: Store) -> None:
    client, items = seeded(store)
    trace_case = items[2]

    client.post(
        "/pending",
        data={
            "ids": [trace_case.id],
            "action": "approve",
            "dataset": "refunds",
            "who": "carol",
            f"keep-{trace_case.id}": ["0", "1"],
        },
    )

    assert store.pending_case(trace_case.id).status == "approved"
    [case] = store.golden_snapshot("refunds").cases
    assert [a.id for a in case.assertions] == ["called-lookup", "limit-tools"]


def test_the_json_api_approves_and_rejects(store: Store) -> None:
    client, items = seeded(store)

    approved = client.post(
        "/api/pending/approve", json={"ids": [items[0].id], "who": "dana", "note": "api"}
    )
    assert approved.status_code == 200
    assert approved.json() == {"dataset": "support", "version": 1, "approved": [items[0].id]}
    again = client.post("/api/pending/approve", json={"ids": [items[0].id], "who": "dana"})
    assert again.status_code == 400 and "already decided" in again.json()["detail"]

    rejected = client.post(
        "/api/pending/reject", json={"ids": [items[1].id], "reason": "off topic"}
    )
    assert rejected.status_code == 200
    assert rejected.json()[0]["decided_by"] == "server-user"
    assert client.post("/api/pending/reject", json={"ids": [], "reason": "x"}).status_code == 422


def test_another_site_cannot_approve(store: Store) -> None:
    client, items = seeded(store)

    forged = client.post(
        "/pending",
        data={"ids": [items[0].id], "action": "approve", "who": "mallory"},
        headers={"Origin": "https://evil.example"},
    )

    assert forged.status_code == 403
    assert store.pending_case(items[0].id).status == "pending"
