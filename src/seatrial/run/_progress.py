"""Progress display: a rich bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
from typing import IO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from seatrial.i18n import gettext as _
from seatrial.i18n import ngettext
from seatrial.record import AttemptRecord, failure_type_word, verdict_word


class RichProgress:
    """A progress bar with a running count of verdicts."""

    def __init__(self, console: Console) -> None:
        self._bar = Progress(
            TextColumn(_("[bold]running")),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[counts]}"),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._task = self._bar.add_task("run", total=0, counts="")
        self._counts: dict[str, int] = {}

    def start(self, total: int, done: int) -> None:
        """Show the bar."""
        self._bar.update(self._task, total=total, completed=done)
        self._bar.start()

    def advance(self, record: AttemptRecord) -> None:
        """Count one finished attempt."""
        self._counts[record.verdict] = self._counts.get(record.verdict, 0) + 1
        counts = " ".join(f"{verdict_word(k)}={v}" for k, v in sorted(self._counts.items()))
        self._bar.update(self._task, advance=1, counts=counts)

    def stop(self) -> None:
        """Remove the bar."""
        self._bar.stop()


class PlainProgress:
    """One line per attempt for small runs, one line per 5% for large ones."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream or sys.stdout
        self._total = 0
        self._done = 0
        self._next_mark = 0

    def start(self, total: int, done: int) -> None:
        """Announce the run."""
        self._total, self._done = total, done
        left = total - done
        print(
            ngettext(
                "running {n} attempt ({done} already stored)",
                "running {n} attempts ({done} already stored)",
                left,
            ).format(n=left, done=done),
            file=self._stream,
        )

    def advance(self, record: AttemptRecord) -> None:
        """Report progress."""
        self._done += 1
        if self._total <= 100:
            verdict = verdict_word(record.verdict)
            if record.failure_type:
                verdict = _("{verdict} ({failure_type})").format(
                    verdict=verdict, failure_type=failure_type_word(record.failure_type)
                )
            print(
                f"[{self._done}/{self._total}] {record.case_id} #{record.attempt}: {verdict}",
                file=self._stream,
            )
        elif self._done * 20 >= self._next_mark * self._total:
            print(f"[{self._done}/{self._total}]", file=self._stream)
            self._next_mark = self._done * 20 // self._total + 1

    def stop(self) -> None:
        """Nothing to clean up."""


def progress_for(console: Console) -> RichProgress | PlainProgress:
    """A rich bar on a terminal, plain lines otherwise."""
    return RichProgress(console) if console.is_terminal else PlainProgress(console.file)
