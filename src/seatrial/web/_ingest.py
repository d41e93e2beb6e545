"""The OTLP/HTTP receiver: ``POST /v1/traces`` (protobuf or JSON, gzip), masked, stored."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
