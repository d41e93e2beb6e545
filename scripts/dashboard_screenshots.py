"""Take the dashboard screenshots shown in the README (``docs/img/dashboard-*.png``).

Seeds a store by running ``seatrial demo`` in a temporary folder, starts ``seatrial serve``
over it on a free loopback port, and photographs three pages, 1280px wide, with Debian's
Chromium driven by Playwright::

    .venv/bin/python scripts/dashboard_screenshots.py

- ``dashboard-run.png``: v2's run page (its gates and the cases it fails);
- ``dashboard-trace.png``: the trace timeline of v2's ``read-missing-config`` attempt;
- ``dashboard-compare.png``: that case in v1 and v2 aligned, the first divergent step marked.

Options: ``--out`` (default ``docs/img``), ``--chromium`` (default ``/usr/bin/chromium``).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from playwright.sync_api import Page, sync_playwright

from seatrial.store import Store

ROOT = Path(__file__).resolve().parents[1]
SEATRIAL = str(Path(sys.executable).parent / "seatrial")
CASE = "read-missing-config"
WIDTH = 1280


def seed(folder: Path) -> tuple[str, str, str]:
    """Run the demo into a store in ``folder``; its URL and the run ids of v1 and v2."""
    url = f"sqlite:///{folder / 'seatrial.db'}"
    subprocess.run(
        [SEATRIAL, "demo", "--db", url, "--report-dir", str(folder / "reports")],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    with Store.open(url) as store:
        runs = {run.tags[-1]: run.run_id for run in store.list_runs(limit=10)}
    return url, runs["v1"], runs["v2"]


@contextmanager
def served(url: str, folder: Path) -> Iterator[str]:
    """``seatrial serve`` over ``url`` on a free loopback port until the block ends."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "SEATRIAL_TOKEN"}
    process = subprocess.Popen(
        [SEATRIAL, "serve", "--port", str(port), "--db", url], cwd=folder, env=env
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                httpx.get(f"{base}/api/openapi.json", timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None:
                    raise SystemExit(f"seatrial serve exited {process.returncode}") from None
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=10)


def shoot(page: Page, url: str, path: Path) -> None:
    """Photograph the whole page at ``url`` once its charts have drawn."""
    response = page.goto(url)
    if response is None or not response.ok:
        raise SystemExit(f"{url} answered {response.status if response else 'nothing'}")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(1500)  # let the charts finish drawing (ECharts animates)
    page.screenshot(path=path, full_page=True)
    print(f"wrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="Chromium to drive")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url, v1, v2 = seed(folder)
        with served(url, folder) as base, sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=args.chromium, headless=True, args=["--no-sandbox"]
            )
            page = browser.new_page(viewport={"width": WIDTH, "height": 900})
            shots = {
                "dashboard-run.png": f"{base}/runs/{v2}",
                "dashboard-trace.png": f"{base}/runs/{v2}/cases/{CASE}/1",
                "dashboard-compare.png": f"{base}/compare/case?base={v1}&cand={v2}&case={CASE}",
            }
            for name, target in shots.items():
                shoot(page, target, args.out / name)
            browser.close()


if __name__ == "__main__":
    main()
