"""What a run starts around it: the gateway for model agents and simulated users, the
processes it uses, the Celery dispatch, and the alerts sent when it ends."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Literal

from seatrial._execute._notice import Backend, NoticeLevel, OnNotice
from seatrial.agent import AgentAdapter
from seatrial.case import Case
from seatrial.config import Config
from seatrial.i18n import N_, ngettext
from seatrial.i18n import gettext as _
from seatrial.report import RunReport
from seatrial.run import Dispatch, RunOptions, gateway_for_run, gateway_record, pinned_here
from seatrial.store import Store

if TYPE_CHECKING:
    from seatrial.gateway import GatewayServer

GatewayStart = Callable[[Store, Config], AbstractAsyncContextManager["GatewayServer | None"]]
"""Starts a run's gateway in this process for the block: seatrial.yaml's
(:func:`project_gateway`), or another (a rerun serves the stored run's cassette)."""


def project_gateway(
    store: Store, config: Config
) -> AbstractAsyncContextManager[GatewayServer | None]:
    """seatrial.yaml's gateway (``models:``, ``gateway:``), recording into ``store``."""
    return gateway_for_run(config.gateway_config(), store=store, project_dir=config.project_dir)


GatewayUse = Literal["proxy", "in_process"]
"""How a run reaches its gateway: through the proxy (and in process), or in process only."""


def needs_gateway(adapter: AgentAdapter, cases: Sequence[Case]) -> bool:
    """Whether a run calls models through the gateway without ``--gateway``: a ``model:``
    agent does, and so does every case with a simulated user (``user_simulator``)."""
    return bool(getattr(adapter, "needs_gateway", False)) or any(
        case.user_simulator is not None for case in cases
    )


def gateway_use(adapter: AgentAdapter, cases: Sequence[Case], *, asked: bool) -> GatewayUse | None:
    """How the run reaches its gateway, if it needs one. ``--gateway`` (``asked``) serves the
    proxy; so does a simulated user talking to an agent other than ``model:``, which may call
    the attempt's proxy URL itself (``session.gateway_url``). A ``model:`` agent and its
    simulated users call the gateway in process: no proxy, and ``--workers`` holds."""
    if asked:
        return "proxy"
    if not needs_gateway(adapter, cases):
        return None
    return "in_process" if getattr(adapter, "needs_gateway", False) else "proxy"


_PINNED_NOTE = {
    "judge": N_(
        "the LLM judge runs in this process: --workers {n} is ignored for this run "
        "(unset judge.model to use several processes)"
    ),
    "gateway": N_(
        "the gateway's proxy (simulated users with an agent that may call it) runs in "
        "this process: --workers {n} is ignored for this run"
    ),
}


def settle_workers(
    options: RunOptions, backend: Backend, *, judge: bool, gateway: bool, say: OnNotice
) -> None:
    """Set ``options.workers`` to what the run will use: 1 on Celery (the workers there share
    the attempts), 1 when the judge or the gateway keeps the run in this process
    (:func:`seatrial.run.pinned_here`, the runner's own rule; ``gateway``: a proxy serves the
    run), said rather than left silently unused."""
    if options.workers <= 1:
        return
    if backend != "local":
        options.workers = 1
        return
    pin = pinned_here(judge=judge, gateway=gateway)
    if pin is not None:
        note = _(_PINNED_NOTE[pin]).format(n=options.workers)
        say("warning", _("note: {note}").format(note=note))
        options.workers = 1


def note_limits_per_worker(
    options: RunOptions, config: Config, use: GatewayUse | None, say: OnNotice
) -> None:
    """Say that ``rpm``/``tpm`` hold per worker when forked workers each open their own
    gateway (in process) and no ``gateway.redis_url`` shares the limits between them."""
    if use != "in_process" or options.workers <= 1:
        return
    gateway = config.gateway_config()
    if gateway.redis_url is None and any(m.rpm or m.tpm for m in gateway.models.values()):
        note = _(
            "rate limits (rpm/tpm) hold per worker: each of the {n} workers calls the models "
            "through a gateway of its own; set gateway.redis_url in seatrial.yaml to share "
            "one limit"
        ).format(n=options.workers)
        say("warning", _("note: {note}").format(note=note))


async def send_alerts(store: Store, report: RunReport, config: Config, say: OnNotice) -> None:
    """Send the run's alerts (``alerts:``); a delivery that fails is a warning, never a failed
    run or another exit code."""
    from seatrial.notify import notify
    from seatrial.report import run_notifications

    try:
        notifications = run_notifications(
            store, report, config.dashboard_address(), config.alerts.drop_confidence
        )
        for notification in notifications:
            for delivery in await notify(config.alerts, notification):
                level: NoticeLevel = "info" if delivery.sent else "warning"
                say(
                    level,
                    _("alert {events}: {delivery}").format(
                        events="+".join(notification.events), delivery=delivery.line()
                    ),
                )
    except Exception as exc:  # the verdict is stored: an alert must not turn it into a crash
        # notify() keeps URLs and secrets out of what it raises; sends fail inside it.
        say(
            "warning",
            _("alerts not sent: {error}").format(error=f"{type(exc).__name__}: {exc}"),
        )


def celery_dispatch(
    store: Store,
    timeout_s: float | None,
    config: Config,
    gateway: bool,
    recorded: dict[str, Any],
    say: OnNotice,
) -> Dispatch:
    """The dispatch to Celery workers, checked (broker reachable, timeout shorter than the
    visibility timeout) before the run is stored; ``recorded`` (what the run stores, by
    ``RunSettings`` field) gains what workers read."""
    from seatrial.distributed import CeleryDispatch

    dispatch = CeleryDispatch.open(store, timeout_s)
    if store.engine.url.get_backend_name() == "sqlite":
        say(
            "warning",
            _(
                "the store is a SQLite file ({url}): every worker must run on this machine "
                "and open the same file; use PostgreSQL (SEATRIAL_DB_URL) for workers on other "
                "machines"
            ).format(url=store.url),
        )
    dispatch.on_resend = lambda count, why: say(
        "warning",
        ngettext(
            "{why}: sent {n} missing attempt again", "{why}: sent {n} missing attempts again", count
        ).format(why=why, n=count),
    )
    recorded.update(backend="celery")
    if gateway:
        recorded.update(gateway=gateway_record(config.gateway_config()))
    say(
        "info",
        _("backend: celery ({url}, queue {queue})").format(
            url=dispatch.broker.shown_url, queue=dispatch.broker.queue
        ),
    )
    return dispatch
