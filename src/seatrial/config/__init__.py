"""The project configuration: ``seatrial.yaml`` in the project folder.

Found by searching the starting folder and then each parent; without one, every key takes its
default. The store's URL is chosen by :func:`resolve_db_url`: ``--db``, then the
``SEATRIAL_DB_URL`` environment variable, then ``db:`` here.

:func:`load_config` reads and checks every key; :func:`read_store_settings` only ``db:`` and
``language:``, for the commands that only read the store (``seatrial runs``). The names below
are imported when first used, so finding the store loads none of the models the other keys
need.

Secrets stay out of this file and out of Seatrial's output: header values may name an
environment variable as ``${NAME}``, which the agent adapter reads when it sends a request.
Nothing here resolves or prints them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from seatrial.config._place import (
    CONFIG_FILE,
    DASHBOARD_URL_ENV,
    DB_URL_ENV,
    StoreSettings,
    find_config,
    read_store_settings,
    resolve_db_url,
)

__all__ = [
    "CONFIG_FILE",
    "DASHBOARD_URL_ENV",
    "DB_URL_ENV",
    "AgentConfig",
    "AlertSettings",
    "Config",
    "ConfigFile",
    "GatewaySettings",
    "JudgeSettings",
    "MaskSettings",
    "RunDefaults",
    "ScheduleConfig",
    "StoreSettings",
    "TierConfig",
    "find_config",
    "load_config",
    "read_store_settings",
    "resolve_db_url",
]

_EXPORTS = {
    "AgentConfig": "seatrial.config._file",
    "AlertSettings": "seatrial.notify",
    "Config": "seatrial.config._file",
    "ConfigFile": "seatrial.config._file",
    "GatewaySettings": "seatrial.gateway",
    "JudgeSettings": "seatrial.judge",
    "MaskSettings": "seatrial.dataset",
    "RunDefaults": "seatrial.config._file",
    "ScheduleConfig": "seatrial.config._schedule",
    "TierConfig": "seatrial.config._tier",
    "load_config": "seatrial.config._file",
}
"""The names whose modules load pydantic and the sections' models, by module."""

if TYPE_CHECKING:
    from seatrial.config._file import AgentConfig, Config, ConfigFile, RunDefaults, load_config
    from seatrial.config._schedule import ScheduleConfig
    from seatrial.config._tier import TierConfig
    from seatrial.dataset import MaskSettings
    from seatrial.gateway import GatewaySettings
    from seatrial.judge import JudgeSettings
    from seatrial.notify import AlertSettings


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'seatrial.config' has no attribute {name!r}")
