"""The offline demo (a real incident after a model change) and the ``seatrial init`` template."""

from seatrial.demo._demo import EXPECTED_V2_FAILURES, run_demo
from seatrial.demo._init import write_project

__all__ = ["EXPECTED_V2_FAILURES", "run_demo", "write_project"]
