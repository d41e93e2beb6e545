"""Seatrial."""
