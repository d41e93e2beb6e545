"""A fake of the GitHub REST API's issue comments, served for real on 127.0.0.1.

It implements what a sticky comment needs (list a pull request's comments page by page with
``Link: <...>; rel="next"``, create one, update one), checks the token header as GitHub does
(401 without it), and can play a read-only token (403 on writes, as a fork's token gets).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class FakeGitHub:
    """One repository with one pull request; ``comments`` holds its comments by id."""

    token: str
    repository: str = "octo/agent"
    number: int = 7
    page_size: int = 30
    """The most comments it returns per page, whatever ``per_page`` asks (forces paging)."""
    read_only: bool = False
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    protected: set[int] = field(default_factory=set)
    """Comments the token may not edit (403), as a token without write access to others'."""
    requests: list[tuple[str, str]] = field(default_factory=list)
    """(method, path with query) of every request, in order."""
    _next_id: int = 100
    _server: ThreadingHTTPServer | None = None

    def add(self, body: str, user: str = "a-reviewer") -> int:
        """Put a comment on the pull request (as someone else wrote it); its id."""
        self._next_id += 1
        self.comments[self._next_id] = {
            "id": self._next_id,
            "body": body,
            "user": {"login": user},
            "html_url": f"https://github.example/{self.repository}/pull/{self.number}"
            f"#issuecomment-{self._next_id}",
        }
        return self._next_id

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeGitHub:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self, status: int, payload: Any, headers: dict[str, str] | None = None):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _allowed(self) -> bool:
                fake.requests.append((self.command, self.path))
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    self._answer(401, {"message": "Bad credentials"})
                    return False
                if not self.headers.get("User-Agent"):
                    self._answer(403, {"message": "Request forbidden: a User-Agent is required"})
                    return False
                return True

            def _body(self) -> dict[str, Any]:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"{}")

            def do_GET(self) -> None:
                if not self._allowed():
                    return
                parts = urlsplit(self.path)
                if parts.path != f"/repos/{fake.repository}/issues/{fake.number}/comments":
                    self._answer(404, {"message": "Not Found"})
                    return
                query = parse_qs(parts.query)
                size = min(int(query.get("per_page", ["30"])[0]), fake.page_size)
                page = int(query.get("page", ["1"])[0])
                ordered = [fake.comments[k] for k in sorted(fake.comments)]
                chunk = ordered[(page - 1) * size : page * size]
                headers = {}
                if page * size < len(ordered):
                    following = f"{fake.url}{parts.path}?per_page={size}&page={page + 1}"
                    headers["Link"] = f'<{following}>; rel="next"'
                self._answer(200, chunk, headers)

            def do_POST(self) -> None:
                if not self._allowed():
                    return
                if self.path != f"/repos/{fake.repository}/issues/{fake.number}/comments":
                    self._answer(404, {"message": "Not Found"})
                    return
                if fake.read_only:
                    self._answer(403, {"message": "Resource not accessible by integration"})
                    return
                number = fake.add(self._body()["body"], user="github-actions[bot]")
                self._answer(201, fake.comments[number])

            def do_PATCH(self) -> None:
                if not self._allowed():
                    return
                prefix = f"/repos/{fake.repository}/issues/comments/"
                comment_id = self.path.removeprefix(prefix)
                if not self.path.startswith(prefix) or int(comment_id) not in fake.comments:
                    self._answer(404, {"message": "Not Found"})
                    return
                if fake.read_only or int(comment_id) in fake.protected:
                    self._answer(403, {"message": "Resource not accessible by integration"})
                    return
                fake.comments[int(comment_id)]["body"] = self._body()["body"]
                self._answer(200, fake.comments[int(comment_id)])

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def bodies(self) -> list[str]:
        """Every comment's body, oldest first."""
        return [self.comments[k]["body"] for k in sorted(self.comments)]


def pull_request_event(tmp_path, number: int = 7, repository: str = "octo/agent"):
    """A ``pull_request`` event file as GitHub Actions writes it (the parts read)."""
    path = tmp_path / "event.json"
    path.write_text(
        json.dumps(
            {
                "action": "synchronize",
                "number": number,
                "pull_request": {"number": number, "head": {"ref": "feature"}},
                "repository": {"full_name": repository},
            }
        ),
        encoding="utf-8",
    )
    return path
