"""``seatrial gateway serve``: the OpenAI-compatible proxy in front of the configured models."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from seatrial.cli._app import app, console, guarded
from seatrial.cli._context import open_store, project, speak_reader_language
from seatrial.cli._options import Db, GatewayHost, Lang, Port
from seatrial.errors import ConfigError
from seatrial.i18n import N_
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    from seatrial.store import Store

gateway_app = typer.Typer(
    help=N_(
        "The model gateway: an OpenAI-compatible proxy that records, limits, prices, "
        "caches, replays and injects faults into model calls."
    ),
    no_args_is_help=True,
)
app.add_typer(gateway_app, name="gateway")


async def _serve(config_dir: Path, host: str, port: int, store: Store | None) -> None:
    from seatrial.config import load_config
    from seatrial.gateway import Gateway, GatewayServer

    config = load_config(config_dir)
    gateway = Gateway(config.gateway_config(), store=store, project_dir=config.project_dir)
    try:
        server = GatewayServer(gateway, host=host, port=port, handle_signals=True)
        await server.start()
        models = ", ".join(gateway.config.models)
        console.print(
            _("gateway on [bold]{url}[/] (models: {models})").format(
                url=server.base_url, models=models
            )
        )
        console.print(_("point an agent at it: OPENAI_BASE_URL={url}").format(url=server.base_url))
        await server.wait()
        await server.stop()
    finally:
        await gateway.aclose()


@gateway_app.command()
@guarded
def serve(
    host: GatewayHost = "127.0.0.1",
    port: Port = 8787,
    db: Db = None,
    no_ledger: Annotated[
        bool, typer.Option("--no-ledger", help=N_("Do not write model calls to the store."))
    ] = False,
    lang: Lang = None,
) -> None:
    """Serve the OpenAI chat-completions and embeddings API in front of seatrial.yaml's models.

    Agents point OPENAI_BASE_URL at http://HOST:PORT/v1. Routing, rate limits, fallback,
    budgets, the cache, cassettes and faults of the `gateway:` section all apply; each call's
    cost goes to the store's ledger. Ctrl-C stops it.
    """
    import asyncio

    config = project()
    speak_reader_language(lang, config)
    if not config.models:
        raise ConfigError(
            _(
                "no models configured: add a `models:` section to seatrial.yaml "
                "(see docs/gateway.md) before starting the gateway"
            )
        )
    store = None if no_ledger else open_store(db, config)
    try:
        asyncio.run(_serve(Path.cwd(), host, port, store))
    finally:
        if store is not None:
            store.close()
