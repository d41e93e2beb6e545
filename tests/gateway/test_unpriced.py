"""An unpriced model's calls are not free: the run names the model and calls its cost a lower
bound (summary, summary.md, report.json); a priced model, or one priced 0 on purpose, is quiet."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from seatrial import execute_suite_async
from seatrial.config import load_config
from seatrial.report import RunReport, print_summary, to_json, to_markdown
from seatrial.store import Store
from seatrial.testing import FakeOpenAI, FakeReply

KEY_ENV = "SEATRIAL_TEST_UNPRICED_KEY"
PRICES = {
    # Not in prices.json and no price: the call's cost is unknown.
    "local": "{model: qwen2.5-coder-0.5b-instruct-q8}",
    # In prices.json (gpt-4o-mini): priced by the table.
    "mini": "{model: gpt-4o-mini-2024-07-18}",
    # A local model its team priced at 0 on purpose: free, and so said.
    "free": "{model: qwen2.5-coder-1.5b-q8, price: {input_per_mtok: 0, output_per_mtok: 0}}",
}


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-unpriced")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'seatrial.db'}") as opened:
        yield opened


async def run_with(tmp_path: Path, store: Store, agent: str) -> RunReport:
    with FakeOpenAI(lambda body: FakeReply("您好！", input_tokens=1200, output_tokens=80)) as up:
        lines = ["models:"] + [
            f"  {name}: {{{spec[1:-1]}, base_url: '{up.base_url}', api_key_env: {KEY_ENV}}}"
            for name, spec in PRICES.items()
        ]
        (tmp_path / "seatrial.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
        suite = tmp_path / "suite.yaml"
        suite.write_text("suite: hello\ncases: [{id: hi, input: 你好}]\n", encoding="utf-8")
        done = await execute_suite_async(
            suite,
            f"model:{agent}",
            config=load_config(tmp_path),
            store=store,
            write_report_files=False,
        )
    return done.report


def summary_of(report: RunReport) -> str:
    out = io.StringIO()
    print_summary(report, Console(file=out, width=300))
    return out.getvalue()


async def test_an_unpriced_model_is_named_and_its_cost_is_a_lower_bound(
    tmp_path: Path, store: Store
) -> None:
    report = await run_with(tmp_path, store, "local")

    assert report.unpriced_models == ["local"]
    [row] = store.model_calls(report.info.run_id)
    assert (row.model, row.priced, row.cost_usd) == ("local", False, 0.0)
    summary = summary_of(report)
    assert "model calls: at least $0.0000 (agent $0.0000), without the unpriced local" in summary
    assert "warning: no price for local: their calls are booked at $0" in summary
    assert "price:" in summary
    document = to_json(report)
    assert document["unpriced_models"] == ["local"]
    assert json.loads(json.dumps(document))["spend_usd"]["total"] == 0.0
    markdown = to_markdown(report)
    assert "Model calls cost at least $0.0000" in markdown
    assert "**Warning: no price for local" in markdown


async def test_a_model_in_the_price_table_gives_no_warning(tmp_path: Path, store: Store) -> None:
    report = await run_with(tmp_path, store, "mini")

    assert report.unpriced_models == []
    [row] = store.model_calls(report.info.run_id)
    assert row.priced is True and row.cost_usd > 0
    summary = summary_of(report)
    assert "no price" not in summary and "at least" not in summary
    assert f"model calls: ${row.cost_usd:.4f} (agent ${row.cost_usd:.4f})" in summary
    assert to_json(report)["unpriced_models"] == []


async def test_a_model_priced_0_on_purpose_gives_no_warning(tmp_path: Path, store: Store) -> None:
    report = await run_with(tmp_path, store, "free")

    assert report.unpriced_models == []
    [row] = store.model_calls(report.info.run_id)
    assert (row.priced, row.cost_usd) == (True, 0.0)
    summary = summary_of(report)
    assert "no price" not in summary and "at least" not in summary
    assert "model calls: $0.0000 (agent $0.0000)" in summary
    assert "Warning" not in to_markdown(report)
