"""A fresh workspace per attempt: the case's fixture copied into a temporary folder.

Every attempt starts from the same files, so a difference in outcome is the agent's doing,
not the leftovers of the previous attempt.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from seatrial.case import Case
from seatrial.errors import Problem, SuiteError
from seatrial.i18n import gettext as _


@dataclass(frozen=True)
class Workspace:
    """The temporary folder of one attempt."""

    path: Path
    """The workspace folder (resolved); removed when the attempt ends."""
    fixture: Path | None
    """The folder it was copied from; None for an empty workspace."""


def _remove(path: Path) -> None:
    """Remove a tree even where the agent made files read-only."""
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            target = os.path.join(root, name)
            if not os.path.islink(target):
                os.chmod(target, os.stat(target).st_mode | stat.S_IWUSR | stat.S_IXUSR)
    shutil.rmtree(path, ignore_errors=True)


@contextmanager
def prepare_workspace(case: Case) -> Iterator[Workspace]:
    """Copy ``case.fixture`` into a fresh temporary folder; remove it afterwards.

    Without a fixture the workspace is an empty folder. Symbolic links are copied as links,
    so a link that points outside the workspace stays one (and the sandbox refuses it).
    """
    fixture = Path(case.fixture).resolve() if case.fixture else None
    if fixture is not None and not fixture.is_dir():
        raise SuiteError(
            [
                Problem(
                    path=str(fixture),
                    line=None,
                    message=_("case `{case}`: fixture folder not found").format(case=case.id),
                    fix=_("create the folder or fix the case's `fixture` path"),
                )
            ]
        )
    label = re.sub(r"[^A-Za-z0-9_.-]+", "_", case.id)[:40]
    path = Path(tempfile.mkdtemp(prefix=f"seatrial-{label}-")).resolve()
    try:
        if fixture is not None:
            shutil.copytree(fixture, path, symlinks=True, dirs_exist_ok=True)
        yield Workspace(path=path, fixture=fixture)
    finally:
        _remove(path)
