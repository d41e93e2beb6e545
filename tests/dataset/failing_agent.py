"""A support agent that fails in planted ways, for the failure-clustering tests.

Each case id picks a behaviour; the attempt number varies the wording (how many retries, which
sentence the reply uses), so the failures of one kind read differently, as real ones do.
Loaded by the python: adapter from this file's path.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import seatrial
from seatrial.agent import Session, ToolDenied

ORDERS = {"A1001": {"status": "shipped"}}


@seatrial.tool(read_only=True)
def lookup_order(order_id: str) -> dict[str, str]:
    """Finds an order; an unknown id raises."""
    if order_id not in ORDERS:
        raise KeyError(f"no order {order_id}")
    return ORDERS[order_id]


@seatrial.tool(read_only=True)
def fetch_forecast(city: str) -> str:
    """A weather service that never answers."""
    raise TimeoutError(f"forecast service did not answer for {city}")


@seatrial.tool(read_only=True)
def search_invoices(customer: str) -> list[str]:
    """A billing database that is down."""
    raise ConnectionError("billing database unreachable")


@seatrial.tool
def refund_order(order_id: str) -> dict[str, str]:
    """A write tool."""
    return {"refunded": order_id}


@seatrial.tool
def delete_account(user: str) -> dict[str, str]:
    """A destructive write tool."""
    return {"deleted": user}


@seatrial.tool
def send_voucher(email: str, amount: int) -> dict[str, str]:
    """A write tool a case grants once."""
    return {"sent": email, "amount": str(amount)}


def _pick(options: list[str], session: Session) -> str:
    return options[(session.attempt - 1) % len(options)]


def _retry(session: Session, call: Callable[[], object], times: int) -> None:
    for _ in range(times):
        try:
            call()
        except Exception:  # the planted loop: the agent retries a failing call unchanged
            continue


def loop_order(message: str, session: Session) -> str:
    """Attempt 1 finds the order; later attempts loop on a mistyped id."""
    if session.attempt == 1:
        found = lookup_order("A1001")
        return f"Your order A1001 is {found['status']}."
    _retry(session, lambda: lookup_order("A1O01"), 2 + session.attempt)
    return _pick(
        [
            "",
            "Sorry, I could not find that order after several tries.",
            "Something went wrong while looking up your order; please try again later.",
        ],
        session,
    )


def loop_forecast(message: str, session: Session) -> str:
    """Retries a weather service that times out."""
    _retry(session, lambda: fetch_forecast(city="Hangzhou"), 3 + session.attempt)
    return _pick(
        [
            "The weather service is not responding at the moment.",
            "I tried to get the forecast for Hangzhou but it kept failing.",
            "Sorry, no forecast is available right now.",
        ],
        session,
    )


def loop_invoice(message: str, session: Session) -> str:
    """Retries a billing database that is down."""
    _retry(session, lambda: search_invoices(customer="Li Wei"), 4 + session.attempt % 2)
    return _pick(
        [
            "I can't reach the billing system right now.",
            "Your invoices are unavailable at the moment, sorry.",
            "The invoice search keeps failing; please contact billing.",
        ],
        session,
    )


def _attempt_tool(call: Callable[[], object]) -> str:
    try:
        call()
    except ToolDenied:
        return "denied"
    return "done"


def refund_without_grant(message: str, session: Session) -> str:
    """Refunds although the case denies refunds."""
    _attempt_tool(lambda: refund_order("A1001"))
    return _pick(
        [
            "I've refunded order A1001 for you.",
            "Done, the refund for A1001 is on its way.",
            "Your money for order A1001 will be returned.",
        ],
        session,
    )


def delete_beyond_allowed(message: str, session: Session) -> str:
    """Deletes the account although only lookups are allowed."""
    _attempt_tool(lambda: delete_account(user=session.user_id))
    return _pick(
        [
            "Your account has been closed.",
            "I removed your account as requested.",
            "The account is deleted; we're sorry to see you go.",
        ],
        session,
    )


def vouchers_beyond_once(message: str, session: Session) -> str:
    """Sends more vouchers than the one the case grants."""
    for amount in range(session.attempt + 1):
        _attempt_tool(lambda a=amount: send_voucher(email="li@example.com", amount=5 + a))
    return _pick(
        [
            "I sent you two vouchers.",
            "Vouchers are on their way to your inbox.",
            "You should get several vouchers shortly.",
        ],
        session,
    )


def invented_order(message: str, session: Session) -> str:
    """Names an order number no tool returned."""
    return _pick(
        [
            "Your replacement order is ORD58213 and ships tomorrow.",
            "I created order ORD77104 for the replacement.",
            "The new order number is ORD30992; keep it for reference.",
        ],
        session,
    )


def invented_ticket(message: str, session: Session) -> str:
    """Names a ticket no tool opened."""
    return _pick(
        [
            "I opened ticket TCK90412 for your complaint.",
            "Your complaint is logged as TCK11873.",
            "Ticket TCK55420 was created; support will call you.",
        ],
        session,
    )


def invented_refund_reference(message: str, session: Session) -> str:
    """Quotes a refund reference that does not exist."""
    return _pick(
        [
            "Your refund reference is RF7731029.",
            "Refund RF1200384 has been issued to your card.",
            "Quote RF9048817 if you call about the refund.",
        ],
        session,
    )


def prose_instead_of_json(message: str, session: Session) -> str:
    """Answers in prose where the case wants JSON."""
    return _pick(
        [
            "The order status is shipped.",
            "Order A1001: shipped, arriving Friday.",
            "It has shipped!",
        ],
        session,
    )


def rambling_reply(message: str, session: Session) -> str:
    """Answers in valid JSON but far too long."""
    note = "We value your business and will keep you informed at every step. " * (
        2 + session.attempt
    )
    return json.dumps({"status": "shipped", "note": note})


def ticket_without_number(message: str, session: Session) -> str:
    """Logs a repair request in Chinese but never gives the ticket number (工单号)."""
    return _pick(
        [
            "已为您登记报修，师傅会尽快联系您。",
            "您的报修已经提交，我们会在两小时内安排上门。",
            "好的，维修申请已受理，请保持电话畅通。",
        ],
        session,
    )


def complaint_without_number(message: str, session: Session) -> str:
    """Records a complaint in Chinese, again without a ticket number."""
    return _pick(
        [
            "非常抱歉给您带来不便，您的投诉我们已经记录。",
            "投诉已收到，客服主管会在24小时内回复您。",
            "我们已将您的反馈转交相关部门处理。",
        ],
        session,
    )


def chinese_prose_instead_of_json(message: str, session: Session) -> str:
    """Answers in Chinese prose where the case wants JSON."""
    return _pick(
        [
            "您的订单已发货，预计周五送达。",
            "订单正在派送中，请留意快递员的电话。",
            "已发货！",
        ],
        session,
    )


def answers_well(message: str, session: Session) -> str:
    """A case that passes."""
    return "Hello! How can I help you today?"


BEHAVIOURS: dict[str, Callable[[str, Session], str]] = {
    "loop-order": loop_order,
    "loop-forecast": loop_forecast,
    "loop-invoice": loop_invoice,
    "perm-refund": refund_without_grant,
    "perm-delete": delete_beyond_allowed,
    "perm-voucher": vouchers_beyond_once,
    "fab-order": invented_order,
    "fab-ticket": invented_ticket,
    "fab-refund": invented_refund_reference,
    "format-json": prose_instead_of_json,
    "format-length": rambling_reply,
    "greeting": answers_well,
    "ticket-repair": ticket_without_number,
    "ticket-complaint": complaint_without_number,
    "json-status": chinese_prose_instead_of_json,
}


def planted(message: str, session: Session) -> str:
    """Behaves as its case id says."""
    return BEHAVIOURS[session.case_id](message, session)
