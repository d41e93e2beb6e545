"""One sticky comment on a GitHub pull request, or the job summary when it cannot be posted.

The comment's identity is a hidden marker on its first line (``<!-- seatrial ci pr -->``): the
pull request's comments are listed (every page) and the one starting with it is updated, so
CI may run as often as it likes and the pull request still holds one Seatrial comment.

Everything comes from the environment a GitHub Actions job has: ``GITHUB_API_URL``,
``GITHUB_TOKEN``, ``GITHUB_REPOSITORY``, ``GITHUB_EVENT_PATH`` (the pull request's number),
``GITHUB_STEP_SUMMARY``. Where a comment cannot be written (no pull request, no token, or a
token that may not write, as on a pull request from a fork) the Markdown goes to the job
summary instead: the comment is a courtesy, the tier's exit code is the gate. The token is
sent in one header and appears in no message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from seatrial.errors import InputError, SeatrialError
from seatrial.i18n import gettext as _

if TYPE_CHECKING:
    import httpx

GITHUB_COMMENT_LIMIT = 65_536
"""The most characters GitHub takes in one comment body."""

DEFAULT_API_URL = "https://api.github.com"
"""The REST API's address when ``GITHUB_API_URL`` is not set (GitHub Enterprise sets it)."""

DEFAULT_MARKER = "seatrial"
"""The marker a body without one is given."""

_PAGE = 100
"""Comments asked for per page (GitHub's maximum)."""
_MAX_PAGES = 100
"""Pages read at most (10,000 comments): a server that always says "next" cannot hang CI."""

_CUT = "\n\n... (cut: GitHub takes at most 65,536 characters in a comment)\n"


@dataclass(frozen=True)
class CommentOutcome:
    """What became of the comment: posted, updated, or written to the job summary."""

    action: Literal["created", "updated", "summary"]
    """``created`` or ``updated`` on the pull request; ``summary`` when it could not be."""
    url: str | None = None
    """The comment's address on GitHub, when posted."""
    reason: str = ""
    """Why the comment went to the job summary."""
    summary_file: str | None = None
    """The job summary file written; None when ``GITHUB_STEP_SUMMARY`` is not set either."""


def marker_line(marker: str) -> str:
    """The hidden first line that identifies a sticky comment: ``<!-- MARKER -->``.

    Raises:
        InputError: the marker is empty, spans lines or holds ``--`` (it would end the
            HTML comment and show).
    """
    if not marker.strip() or "\n" in marker or "--" in marker or marker != marker.strip():
        raise InputError(
            _(
                "comment marker {marker!r} cannot be hidden in an HTML comment: use one line of "
                "text without `--` and without leading or trailing spaces, e.g. `seatrial ci pr`"
            ).format(marker=marker)
        )
    return f"<!-- {marker} -->"


def body_marker(body: str) -> str | None:
    """The marker on a body's first line, or None when it starts with none."""
    first = body.split("\n", 1)[0].strip()
    if first.startswith("<!-- ") and first.endswith(" -->") and len(first) > len("<!--  -->"):
        return first[len("<!-- ") : -len(" -->")]
    return None


def with_marker(body: str, marker: str) -> str:
    """``body`` starting with ``marker``'s line, and no longer than GitHub takes."""
    line = marker_line(marker)
    if body_marker(body) != marker:
        body = f"{line}\n{body}"
    if len(body) > GITHUB_COMMENT_LIMIT:
        cut = body.rfind("\n", 0, GITHUB_COMMENT_LIMIT - len(_CUT))
        body = body[: cut if cut > 0 else GITHUB_COMMENT_LIMIT - len(_CUT)] + _CUT
    return body


def _read_event(event_path: str) -> dict[str, Any]:
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(
            _("cannot read the GitHub event file {path} (GITHUB_EVENT_PATH): {error}").format(
                path=event_path, error=exc
            )
        ) from None
    return event if isinstance(event, dict) else {}


def _pull_request_number(event: dict[str, Any]) -> int | None:
    """The pull request an event is about (``pull_request`` events, and comments on one)."""
    pull = event.get("pull_request")
    if isinstance(pull, dict) and isinstance(pull.get("number"), int):
        return int(pull["number"])
    issue = event.get("issue")
    if (
        isinstance(issue, dict)
        and issue.get("pull_request")
        and isinstance(issue.get("number"), int)
    ):
        return int(issue["number"])
    return None


def _repository(environ: Mapping[str, str], event: dict[str, Any]) -> str:
    repository = environ.get("GITHUB_REPOSITORY") or str(
        (event.get("repository") or {}).get("full_name") or ""
    )
    if repository.count("/") != 1:
        raise InputError(
            _(
                "GITHUB_REPOSITORY is not set to OWNER/NAME and the event names no repository; "
                "set GITHUB_REPOSITORY (GitHub Actions sets it in every job)"
            )
        )
    return repository


def write_job_summary(
    body: str, reason: str, environ: Mapping[str, str] | None = None
) -> CommentOutcome:
    """Append ``body`` to the job summary (``GITHUB_STEP_SUMMARY``), saying why it is there."""
    environ = os.environ if environ is None else environ
    target = environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(f"> Seatrial did not comment on the pull request: {reason}.\n\n")
            handle.write(body if body.endswith("\n") else body + "\n")
    return CommentOutcome(action="summary", reason=reason, summary_file=target or None)


class _GitHub:
    """The three calls a sticky comment needs, on one connection pool."""

    def __init__(self, client: httpx.Client, repository: str, number: int) -> None:
        self.client = client
        self.repository = repository
        self.number = number

    def _check(self, response: httpx.Response, doing: str) -> None:
        if response.is_success:
            return
        try:
            said = str(response.json().get("message", ""))
        except (ValueError, AttributeError):
            said = response.text[:200]
        raise _Refused(response.status_code, f"{doing}: HTTP {response.status_code} {said}")

    def comments(self) -> list[dict[str, Any]]:
        """Every comment on the pull request, following the ``next`` links."""
        found: list[dict[str, Any]] = []
        origin = urlsplit(str(self.client.base_url))[:2]
        url: str | None = f"repos/{self.repository}/issues/{self.number}/comments?per_page={_PAGE}"
        for _page in range(_MAX_PAGES):
            if url is None:
                break
            response = self.client.get(url)
            self._check(response, f"listing the comments of pull request #{self.number}")
            page = response.json()
            found.extend(c for c in page if isinstance(c, dict))
            url = response.links.get("next", {}).get("url")
            # The token goes only where the API lives, whatever a Link header says.
            if url is not None and urlsplit(url)[:2] != origin:
                url = None
        return found

    def create(self, body: str) -> str:
        response = self.client.post(
            f"repos/{self.repository}/issues/{self.number}/comments", json={"body": body}
        )
        self._check(response, f"commenting on pull request #{self.number}")
        return str(response.json().get("html_url") or "")

    def update(self, comment_id: int, body: str) -> str:
        response = self.client.patch(
            f"repos/{self.repository}/issues/comments/{comment_id}", json={"body": body}
        )
        self._check(response, f"updating comment {comment_id}")
        return str(response.json().get("html_url") or "")


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def post_sticky_comment(
    body: str,
    *,
    marker: str | None = None,
    environ: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
) -> CommentOutcome:
    """Create or update the pull request's comment that starts with ``marker``.

    Args:
        body: the Markdown; a body whose first line is not ``marker``'s gets that line.
        marker: the comment's identity; None takes the body's own first-line marker, else
            ``seatrial``.
        environ: where ``GITHUB_*`` are read; default the process environment.
        transport: an httpx transport (tests hand a mock one; default the network).

    Returns:
        what was done. No pull request (not a ``pull_request`` event), no ``GITHUB_TOKEN``, or
        a token GitHub refuses (401, 403: a fork's read-only token) write the job summary
        instead; that is not an error.

    Raises:
        InputError: the event file or the repository's name cannot be read (exit 2).
        SeatrialError: GitHub cannot be reached or answered another error (exit 3).
    """
    # httpx (with click and pygments, which it imports) is imported here, not at the top:
    # reading seatrial.yaml imports this package, and `seatrial runs` should not pay for it.
    import httpx

    environ = os.environ if environ is None else environ
    marker = marker or body_marker(body) or DEFAULT_MARKER
    body = with_marker(body, marker)
    event_path = environ.get("GITHUB_EVENT_PATH", "")
    if not event_path:
        return write_job_summary(
            body, "not in a GitHub Actions job (GITHUB_EVENT_PATH is not set)", environ
        )
    event = _read_event(event_path)
    number = _pull_request_number(event)
    if number is None:
        name = environ.get("GITHUB_EVENT_NAME")
        said = f"the {name} event" if name else "this event"
        return write_job_summary(body, f"{said} is not a pull request", environ)
    token = environ.get("GITHUB_TOKEN", "")
    if not token:
        return write_job_summary(body, "GITHUB_TOKEN is not set", environ)
    api_url = (environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/") + "/"
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "seatrial",
    }
    repository = _repository(environ, event)
    try:
        with httpx.Client(
            base_url=api_url, headers=headers, transport=transport, timeout=30.0
        ) as client:
            github = _GitHub(client, repository, number)
            line = marker_line(marker)
            marked = [
                c
                for c in github.comments()
                if str(c.get("body") or "").split("\n", 1)[0].strip() == line
            ]
            # Newest first; one the token may not edit (someone else's, copying the marker)
            # is passed over rather than blocking the comment.
            for existing in reversed(marked):
                try:
                    url = github.update(int(existing["id"]), body)
                except _Refused as refused:
                    if refused.status != 403:
                        raise
                    continue
                return CommentOutcome(action="updated", url=url)
            return CommentOutcome(action="created", url=github.create(body))
    except _Refused as refused:
        if refused.status in (401, 403):
            why = (
                "the token may not write to this pull request (a pull request from a fork "
                "gets a read-only token; otherwise grant `permissions: pull-requests: write`)"
                if refused.status == 403
                else "GitHub refused the token (401)"
            )
            return write_job_summary(body, f"{why}; GitHub said: {refused}", environ)
        if refused.status == 404:
            raise InputError(
                _(
                    "{refused}: check GITHUB_REPOSITORY ({repository}) and GITHUB_API_URL ({url})"
                ).format(refused=refused, repository=repository, url=api_url)
            ) from None
        raise SeatrialError(
            _("GitHub at {url} answered {refused}").format(url=api_url, refused=refused)
        ) from None
    except httpx.HTTPError as exc:
        raise SeatrialError(
            _("cannot reach GitHub at {url}: {error}").format(
                url=api_url, error=f"{type(exc).__name__}: {exc}"
            )
        ) from None
