"""The gateway a Celery worker builds for a run: limits shared through Redis, drift said."""

from __future__ import annotations

import logging

import pytest

from seatrial.gateway import GatewayConfig, ModelConfig
from seatrial.run import gateway_record, worker_gateway_config

BROKER = "redis://127.0.0.1:6379/3"


def config(**fields: object) -> GatewayConfig:
    main = ModelConfig(name="main", model="gpt-4o-mini-2024-07-18", rpm=60)
    return GatewayConfig(models={"main": main}, **fields)  # type: ignore[arg-type]


def test_workers_share_rate_limits_through_the_brokers_redis_by_default() -> None:
    assert worker_gateway_config(config(), BROKER).redis_url == BROKER


def test_a_redis_url_in_the_workers_seatrial_yaml_wins_over_the_broker() -> None:
    own = "redis://limits.internal:6379/0"
    assert worker_gateway_config(config(redis_url=own), BROKER).redis_url == own


def test_a_broker_that_is_not_redis_leaves_limits_per_worker_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="seatrial.gateway"):
        built = worker_gateway_config(config(), "amqp://guest@127.0.0.1:5672//")
    assert built.redis_url is None
    [warning] = caplog.records
    assert "per worker" in warning.getMessage()
    assert "gateway.redis_url" in warning.getMessage()


def test_a_worker_whose_models_differ_from_the_runs_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    stored = gateway_record(config())
    with caplog.at_level(logging.WARNING, logger="seatrial.gateway"):
        worker_gateway_config(config(), BROKER, stored, run_id="run-1")
    assert caplog.records == []  # the same models: the broker's Redis is no difference
    faster = GatewayConfig(
        models={"main": ModelConfig(name="main", model="gpt-4o-mini-2024-07-18", rpm=600)}
    )
    with caplog.at_level(logging.WARNING, logger="seatrial.gateway"):
        worker_gateway_config(faster, BROKER, stored, run_id="run-1")
    [warning] = caplog.records
    assert "run-1" in warning.getMessage() and "differs" in warning.getMessage()
