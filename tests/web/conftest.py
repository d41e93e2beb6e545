"""The dashboard as a user starts it: a store seeded by ``seatrial demo``, ``seatrial serve``.

Nothing here is autouse: tests ask for ``demo_store`` (the seeded store) or ``dashboard``
(the base URL of a real ``seatrial serve`` process over it). ``serve(...)`` starts a server
over any store, with any flags, for tests that need their own.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from seatrial.store import ReviewItem, Store

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

SEATRIAL = str(Path(sys.executable).parent / "seatrial")
FAILING_CASE = "read-missing-config"
"""The v2 case the demo fails with a loop on a read_file that keeps failing."""
REVIEWER_OUTPUT = "I could not find config/settings.yaml."
"""What the review item says the agent replied (the item is made up; the run is real)."""


CHROMIUM_VARIABLE = "SEATRIAL_CHROMIUM"
NO_CHROMIUM = (
    "no Chromium found: as root on Debian run `make chromium` (apt-get install chromium), or "
    f"install Chromium and set {CHROMIUM_VARIABLE}=/path/to/chromium, to drive the dashboard "
    "in a browser"
)


def find_chromium() -> Path | None:
    """The Chromium the browser tests drive: the one ``SEATRIAL_CHROMIUM`` names, else
    ``chromium`` (Debian) or ``chromium-browser`` (Ubuntu) on PATH; None when there is none.

    A ``SEATRIAL_CHROMIUM`` that names no executable is an error, not a skip: whoever set it
    expects the browser tests to run.
    """
    named = os.environ.get(CHROMIUM_VARIABLE)
    if named:
        path = Path(named)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise FileNotFoundError(
                f"{CHROMIUM_VARIABLE}={named} is not an executable file: point it at a "
                "Chromium binary, or unset it"
            )
        return path
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    return Path(found) if found else None


def environment() -> dict[str, str]:
    """This process's environment without the variables that would change what serve does
    (the token, the store, the language)."""
    dropped = ("SEATRIAL_TOKEN", "SEATRIAL_DB_URL", "SEATRIAL_LANG", "LC_ALL", "LC_MESSAGES")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    # English unless a test says otherwise: the server's language is the pages' default.
    return {**env, "USER": "server-user", "COLUMNS": "200", "LANG": "C.UTF-8"}


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve(
    db_url: str, cwd: Path, *flags: str, host: str = "127.0.0.1", timeout_s: float = 30
) -> Iterator[str]:
    """Run ``seatrial serve`` over ``db_url`` until the block ends; yields its base URL.

    Waits until the server answers HTTP at all (a 401 counts: it is up).
    """
    port = free_port(host)
    log = cwd / f"serve-{port}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [SEATRIAL, "serve", "--host", host, "--port", str(port), "--db", db_url, *flags],
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=environment(),
        )
    base = f"http://{host}:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"seatrial serve exited {process.returncode}:\n{log.read_text()}"
                )
            try:
                httpx.get(f"{base}/api/openapi.json", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    output = log.read_text()
                    raise RuntimeError(f"seatrial serve never answered:\n{output}") from None
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass(frozen=True)
class DemoStore:
    """A store holding the demo's two runs and one open review item."""

    url: str
    """The store URL (SQLite in a temporary folder)."""
    folder: Path
    """The folder the demo ran in (its reports, the server logs)."""
    v1: str
    """The run id of agent v1 (passes its gate)."""
    v2: str
    """The run id of agent v2 (fails its gate)."""
    item_id: str
    """The open review item, about v2's read-missing-config."""


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> DemoStore:
    """A store seeded by running ``seatrial demo`` for real, plus one review item."""
    folder = tmp_path_factory.mktemp("dashboard")
    url = f"sqlite:///{folder / 'seatrial.db'}"
    demo = subprocess.run(
        [SEATRIAL, "demo", "--db", url, "--report-dir", str(folder / "reports")],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
        env=environment(),
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    with Store.open(url) as store:
        runs = {run.tags[-1]: run.run_id for run in store.list_runs(limit=10)}
        failing = store.attempts(runs["v2"], case_id=FAILING_CASE)[0]
        case = next(c for c in store.run_cases(runs["v2"]) if c.id == FAILING_CASE)
        item = ReviewItem(
            run_id=runs["v2"],
            case_id=FAILING_CASE,
            attempt=failing.attempt,
            assertion_id="judge",
            why="warning",
            judge_model="judge-demo",
            judge_verdict="WARNING",
            judge_reason="the agent kept reading a file that does not exist",
            confidence=0.5,
            input=case.input or "",
            output=failing.response or REVIEWER_OUTPUT,
            category=case.category,
        )
        store.add_review_items([item])
    return DemoStore(url=url, folder=folder, v1=runs["v1"], v2=runs["v2"], item_id=item.id)


@pytest.fixture(scope="module")
def dashboard(demo_store: DemoStore) -> Iterator[str]:
    """The base URL of ``seatrial serve`` over the demo store (loopback, no token)."""
    with serve(demo_store.url, demo_store.folder) as base:
        yield base


ARTIFACTS = Path(__file__).parents[2] / "test-artifacts" / "dashboard"
"""Where the browser tests leave their screenshots (CI keeps them as an artifact)."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Headless Chromium (Debian's; Playwright's own download does not work here)."""
    chromium = find_chromium()
    if chromium is None:
        pytest.skip(NO_CHROMIUM)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=["--no-sandbox"]
        )
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh 1280px-wide tab that fails the test on any script error in a page."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, f"script errors in the pages: {errors}"


def snap(page: Page, name: str) -> None:
    """Keep a screenshot of the whole page as ``test-artifacts/dashboard/NAME.png``."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=ARTIFACTS / f"{name}.png", full_page=True)
