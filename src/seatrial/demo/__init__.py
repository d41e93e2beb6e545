"""The offline demo (seed 001's story) and the ``seatrial init`` project template."""

from seatrial.demo._demo import EXPECTED_V2_FAILURES, run_demo
from seatrial.demo._init import write_project

__all__ = ["EXPECTED_V2_FAILURES", "run_demo", "write_project"]
