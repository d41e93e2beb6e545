"""Suites and cases: the models, loaders for YAML, JSONL and XLSX, and validation."""

from seatrial.case._gates import CHECKS, GateSpec, PassHatK, Regression, gates_hash, load_gates
from seatrial.case._load import SUITE_SUFFIXES, load_suite, validate_paths
from seatrial.case._model import (
    SUITE_FORMAT_VERSION,
    AssertionSpec,
    Case,
    Gate,
    Limits,
    Suite,
    Turn,
)

__all__ = [
    "CHECKS",
    "GateSpec",
    "PassHatK",
    "Regression",
    "gates_hash",
    "load_gates",
    "SUITE_FORMAT_VERSION",
    "SUITE_SUFFIXES",
    "AssertionSpec",
    "Case",
    "Gate",
    "Limits",
    "Suite",
    "Turn",
    "load_suite",
    "validate_paths",
]
