"""Suites and cases: the models, loaders for YAML, JSONL and XLSX, and validation.

``parse_yaml``, ``read_text`` and ``explain`` are public so that ``seatrial.yaml`` is read the
way suites are: with the line of every key, and validation errors explained with a fix.
"""

from seatrial.case._agent_settings import MODEL_AGENT_KEYS, MODEL_PREFIX, ModelAgentSettings
from seatrial.case._assertions import CheckedAssertion, check_assertion
from seatrial.case._explain import explain
from seatrial.case._faults import FaultKind, ToolFault
from seatrial.case._gates import (
    CHECKS,
    GateSpec,
    PassHatK,
    Regression,
    gates_hash,
    load_gates,
    load_gates_section,
)
from seatrial.case._load import SUITE_SUFFIXES, load_suite, suite_files_in, validate_paths
from seatrial.case._model import (
    SUITE_FORMAT_VERSION,
    AssertionSpec,
    Case,
    Gate,
    Limits,
    Suite,
    Turn,
)
from seatrial.case._simulator import SimulatorSettings, UserSimulator
from seatrial.case._yaml import parse_yaml, read_text

__all__ = [
    "CHECKS",
    "MODEL_AGENT_KEYS",
    "MODEL_PREFIX",
    "SUITE_FORMAT_VERSION",
    "SUITE_SUFFIXES",
    "AssertionSpec",
    "Case",
    "CheckedAssertion",
    "FaultKind",
    "Gate",
    "GateSpec",
    "Limits",
    "ModelAgentSettings",
    "PassHatK",
    "Regression",
    "SimulatorSettings",
    "Suite",
    "ToolFault",
    "Turn",
    "UserSimulator",
    "check_assertion",
    "explain",
    "gates_hash",
    "load_gates",
    "load_gates_section",
    "load_suite",
    "parse_yaml",
    "read_text",
    "suite_files_in",
    "validate_paths",
]
