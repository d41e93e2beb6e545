"""The installed version of Seatrial."""

__version__ = "0.1.0"
