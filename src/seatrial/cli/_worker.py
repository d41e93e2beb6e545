"""Placeholder: filled by issue 13's work."""
