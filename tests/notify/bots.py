"""Local stand-ins for the chat platforms' webhooks: real HTTP servers on 127.0.0.1.

Each checks a request as its platform documents it (the body's shape and, where the platform
signs, the signature, recomputed here from the shared secret independently of Seatrial's
code) and answers as the platform does: its success body, or its error for a bad signature or
a malformed body. What it saw is kept in ``requests`` and what was wrong in ``problems``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

OK = {
    "feishu": (200, {"code": 0, "msg": "success", "data": {}}),
    "dingtalk": (200, {"errcode": 0, "errmsg": "ok"}),
    "wecom": (200, {"errcode": 0, "errmsg": "ok"}),
    "slack": (200, "ok"),
    "webhook": (200, {"received": True}),
}
SIGN_FAILED = {
    "feishu": (200, {"code": 19021, "msg": "sign match fail or timestamp is not within one hour"}),
    "dingtalk": (200, {"errcode": 310000, "errmsg": "sign not match"}),
    "webhook": (401, {"error": "bad signature"}),
}
BAD_BODY = {
    "feishu": (400, {"code": 9499, "msg": "Bad Request", "data": {}}),
    "dingtalk": (200, {"errcode": 40035, "errmsg": "missing parameter"}),
    "wecom": (200, {"errcode": 40008, "errmsg": "invalid message type"}),
    "slack": (400, "invalid_blocks"),
    "webhook": (400, {"error": "bad body"}),
}


@dataclass
class Seen:
    """One request as the server received it."""

    path: str
    query: dict[str, str]
    headers: dict[str, str]
    raw: bytes
    body: Any
    accepted: bool = False
    """Answered with the platform's success."""

    def text(self) -> str:
        """Everything readable in the message, for "names the suite" checks."""
        return json.dumps(self.body, ensure_ascii=False)


@dataclass
class Bot:
    """A platform's webhook on a loopback port."""

    kind: str
    secret: str | None = None
    script: list[tuple[int, Any, dict[str, str]]] = field(default_factory=list)
    """Answers given first, in order (status, body, headers), before the platform's own."""
    requests: list[Seen] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    token: str = "hook-token-3f9a1c"
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The webhook URL, as the platform hands it out (its key inside)."""
        assert self.server is not None
        base = f"http://127.0.0.1:{self.server.server_address[1]}"
        paths = {
            "feishu": f"/open-apis/bot/v2/hook/{self.token}",
            "dingtalk": f"/robot/send?access_token={self.token}",
            "wecom": f"/cgi-bin/webhook/send?key={self.token}",
            "slack": f"/services/T000/B000/{self.token}",
            "webhook": f"/hooks/seatrial/{self.token}",
        }
        return base + paths[self.kind]

    @property
    def accepted(self) -> list[Seen]:
        """The requests it answered with success."""
        return [seen for seen in self.requests if seen.accepted]

    def start(self) -> Bot:
        bot = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                parts = urlsplit(self.path)
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = None
                seen = Seen(parts.path, query, dict(self.headers.items()), raw, body)
                bot.requests.append(seen)
                status, answer, headers = bot.answer(seen)
                seen.accepted = (status, answer) == OK[bot.kind]
                data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def answer(self, seen: Seen) -> tuple[int, Any, dict[str, str]]:
        if self.script:
            return self.script.pop(0)
        if self.token not in seen.path + json.dumps(seen.query):
            self.problems.append("the bot's key is missing from the URL")
            return 404, {"error": "no such hook"}, {}
        shape = SHAPES[self.kind](seen)
        if shape:
            self.problems.append(f"{self.kind} body: {shape}")
            status, body = BAD_BODY[self.kind]
            return status, body, {}
        signed = SIGNATURES.get(self.kind)
        if self.secret is not None and signed is not None:
            wrong = signed(seen, self.secret)
            if wrong:
                self.problems.append(f"{self.kind} signature: {wrong}")
                status, body = SIGN_FAILED[self.kind]
                return status, body, {}
        status, body = OK[self.kind]
        return status, body, {}


def _feishu_shape(seen: Seen) -> str:
    body = seen.body
    if not isinstance(body, dict) or body.get("msg_type") != "interactive":
        return "msg_type is not interactive"
    card = body.get("card")
    if not isinstance(card, dict):
        return "no card"
    title = card.get("header", {}).get("title", {})
    if title.get("tag") != "plain_text" or not title.get("content"):
        return "the header has no plain_text title"
    elements = card.get("elements")
    if not isinstance(elements, list) or not elements:
        return "no elements"
    if any("tag" not in element for element in elements):
        return "an element without a tag"
    texts = [e["text"] for e in elements if e["tag"] == "div" and "text" in e]
    if not texts or texts[0].get("tag") != "lark_md":
        return "no lark_md text"
    if len(seen.raw) > 20 * 1024:
        return "the body is over 20 KB"
    return ""


def _dingtalk_shape(seen: Seen) -> str:
    body = seen.body
    if not isinstance(body, dict) or body.get("msgtype") != "markdown":
        return "msgtype is not markdown"
    markdown = body.get("markdown", {})
    if not (isinstance(markdown.get("title"), str) and markdown["title"]):
        return "no markdown.title"
    if not (isinstance(markdown.get("text"), str) and markdown["text"]):
        return "no markdown.text"
    return ""


def _wecom_shape(seen: Seen) -> str:
    body = seen.body
    if not isinstance(body, dict) or body.get("msgtype") != "markdown":
        return "msgtype is not markdown"
    content = body.get("markdown", {}).get("content")
    if not isinstance(content, str) or not content:
        return "no markdown.content"
    if len(content.encode("utf-8")) > 4096:
        return "markdown.content is over 4096 bytes"
    return ""


def _slack_shape(seen: Seen) -> str:
    body = seen.body
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        return "no text"
    blocks = body.get("blocks")
    if not isinstance(blocks, list) or not 0 < len(blocks) <= 50:
        return "blocks missing or over 50"
    for block in blocks:
        kind = block.get("type")
        if kind not in ("header", "section", "actions", "context", "divider"):
            return f"unknown block type {kind!r}"
        if kind == "section" and "text" in block:
            text = block["text"]
            if text.get("type") != "mrkdwn" or len(text.get("text", "")) > 3000:
                return "a section's text is not mrkdwn of at most 3000 characters"
        if kind == "header" and len(block["text"]["text"]) > 150:
            return "a header over 150 characters"
    return ""


def _webhook_shape(seen: Seen) -> str:
    body = seen.body
    wanted = {"schema", "id", "event", "events", "title", "text", "link", "facts", "sent_at"}
    if not isinstance(body, dict) or set(body) != wanted:
        return f"keys are not {sorted(wanted)}"
    if not body["events"] or body["events"][0] != body["event"]:
        return "events does not start with the event"
    if body["schema"] != "seatrial.notification/1":
        return "unknown schema"
    if seen.headers.get("X-Seatrial-Delivery") != body["id"]:
        return "X-Seatrial-Delivery is not the body's id"
    return ""


def _feishu_signature(seen: Seen, secret: str) -> str:
    timestamp, sign = seen.body.get("timestamp"), seen.body.get("sign")
    if not (timestamp and sign):
        return "no timestamp and sign"
    if abs(time.time() - int(timestamp)) > 3600:
        return "the timestamp is more than an hour off"
    key = f"{timestamp}\n{secret}".encode()
    expected = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()
    return "" if hmac.compare_digest(expected, sign) else "sign does not match"


def _dingtalk_signature(seen: Seen, secret: str) -> str:
    timestamp, sign = seen.query.get("timestamp"), seen.query.get("sign")
    if not (timestamp and sign):
        return "no timestamp and sign query parameters"
    if abs(time.time() * 1000 - int(timestamp)) > 3600 * 1000:
        return "the timestamp is more than an hour off"
    digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256)
    expected = base64.b64encode(digest.digest()).decode()
    return "" if hmac.compare_digest(expected, sign) else "sign does not match"


def _webhook_signature(seen: Seen, secret: str) -> str:
    header = seen.headers.get("X-Seatrial-Signature", "")
    expected = "sha256=" + hmac.new(secret.encode(), seen.raw, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, header):
        return "X-Seatrial-Signature does not match the body"
    stamp = int(seen.headers.get("X-Seatrial-Timestamp", "0"))
    if abs(time.time() - stamp) > 300:
        return "X-Seatrial-Timestamp is more than five minutes off"
    return ""


SHAPES = {
    "feishu": _feishu_shape,
    "dingtalk": _dingtalk_shape,
    "wecom": _wecom_shape,
    "slack": _slack_shape,
    "webhook": _webhook_shape,
}
SIGNATURES = {
    "feishu": _feishu_signature,
    "dingtalk": _dingtalk_signature,
    "webhook": _webhook_signature,
}
