"""Suites and cases: the models, loaders for YAML, JSONL and XLSX, and validation."""

from seatrial.case._assertions import CheckedAssertion, check_assertion
from seatrial.case._explain import explain
from seatrial.case._gates import (
    CHECKS,
    GateSpec,
    PassHatK,
    Regression,
    gates_hash,
    load_gates,
    load_gates_section,
)
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
from seatrial.case._yaml import parse_yaml, read_text

__all__ = [
    "CheckedAssertion",
    "check_assertion",
    "CHECKS",
    "GateSpec",
    "PassHatK",
    "Regression",
    "gates_hash",
    "load_gates",
    "load_gates_section",
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
    # Reading a YAML settings file with the line of every key, and explaining validation
    # errors with a fix: seatrial.yaml is read the way suites are.
    "explain",
    "parse_yaml",
    "read_text",
]
