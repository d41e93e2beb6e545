"""The one error a trace file reader raises, in a module of its own so every reader can."""

from __future__ import annotations


class TraceFormatError(ValueError):
    """A trace file cannot be read.

    The message names the file, the line (JSONL) or the place in the document
    (``[3].observations[2].startTime``) and what was expected there; it never quotes a value
    from the file, which may hold personal data that is masked only after it has been read.
    Readers raise it with the place and the expectation; :func:`read_trace_file` adds the
    file and line.
    """
