"""The project configuration: finding seatrial.yaml, its keys, errors, and the store URL."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from seatrial.config import (
    DB_URL_ENV,
    AgentConfig,
    ConfigFile,
    RunDefaults,
    load_config,
    read_store_settings,
    resolve_db_url,
)
from seatrial.errors import ConfigError
from seatrial.gateway import GatewayConfig
from seatrial.judge import JudgeSettings


def write_config(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "seatrial.yaml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def test_without_a_file_every_key_has_its_default(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config.file is None
    assert config.project_dir == tmp_path.resolve()
    assert config.project == tmp_path.name
    assert config.agents == {}
    assert config.db is None
    assert (config.run.repeats, config.run.concurrency, config.run.timeout_s) == (None, 8, 60.0)
    assert config.suites == []


def test_the_file_is_found_in_a_parent_folder(tmp_path: Path) -> None:
    path = write_config(
        tmp_path,
        """
        project: booking-agent
        agents:
          local: http://127.0.0.1:9000/chat
          staging:
            spec: https://staging.example/chat
            headers: {Authorization: "Bearer ${STAGING_TOKEN}"}
            timeout_s: 30
        db: postgresql+psycopg://qa@127.0.0.1/seatrial
        run: {repeats: 3, concurrency: 16, timeout_s: 90, report_dir: reports}
        suites: [suites/smoke.yaml, suites/golden/]
        """,
    )
    nested = tmp_path / "suites" / "golden"
    nested.mkdir(parents=True)
    config = load_config(nested)
    assert config.file == path.resolve()
    assert config.project_dir == tmp_path.resolve()
    assert config.project == "booking-agent"
    assert config.agents["local"] == AgentConfig(spec="http://127.0.0.1:9000/chat")
    staging = config.agents["staging"]
    # Secrets stay as written: ${NAME} is resolved by the adapter, never here.
    assert staging.headers == {"Authorization": "Bearer ${STAGING_TOKEN}"}
    assert staging.timeout_s == 30
    assert config.run.repeats == 3 and config.run.concurrency == 16
    assert config.run.timeout_s == 90
    assert config.report_path() == tmp_path.resolve() / "reports"
    assert config.suite_paths() == [
        tmp_path.resolve() / "suites/smoke.yaml",
        tmp_path.resolve() / "suites/golden",
    ]


def test_a_file_as_start_searches_from_its_folder(tmp_path: Path) -> None:
    write_config(tmp_path, "project: p\n")
    suite = tmp_path / "s.yaml"
    suite.write_text("cases: []\n", encoding="utf-8")
    assert load_config(suite).project == "p"


def test_header_values_are_not_shown_by_repr(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        "agents:\n  a: {spec: http://x, headers: {X-Api-Key: literal-secret}}\n",
    )
    assert "literal-secret" not in repr(load_config(tmp_path))


def test_an_empty_file_gives_the_defaults_named_after_the_folder(tmp_path: Path) -> None:
    write_config(tmp_path / "my-agent", "# nothing yet\n")
    config = load_config(tmp_path / "my-agent")
    assert config.project == "my-agent"
    assert config.run.concurrency == 8


def test_invalid_keys_and_values_are_all_reported_with_lines_and_fixes(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        """
        project: p
        agents:
          a:
            spec: http://x
            timout_s: 3
        run:
          concurrency: many
        suite: [a.yaml]
        """,
    )
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    text = str(caught.value)
    lines = text.splitlines()
    assert lines[0] == "seatrial.yaml is invalid:"
    assert lines[1].endswith(
        "seatrial.yaml:5: unknown key `timout_s` in `agents.a`; did you mean `timeout_s`? "
        "(fix: rename it to `timeout_s`)"
    )
    assert "seatrial.yaml:7: `run.concurrency` must be a whole number >= 1, got 'many'" in lines[2]
    assert "seatrial.yaml:8: unknown key `suite`; did you mean `suites`?" in lines[3]
    assert caught.value.exit_code == 2


def test_errors_never_show_a_header_value_or_the_db_url(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        """
        agents:
          a:
            spec: http://x
            headers: {Authorization: [Bearer, hunter2]}
        db: {url: "postgresql://qa:hunter2@127.0.0.1/x"}
        """,
    )
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert "hunter2" not in str(caught.value)
    assert ":4: `agents.a.headers.Authorization` must be text" in str(caught.value)
    assert ":5: `db` must be text" in str(caught.value)


def test_yaml_syntax_error_is_a_config_error_with_the_line(tmp_path: Path) -> None:
    write_config(tmp_path, "project: p\nrun:\n  concurrency: [8\n")
    with pytest.raises(ConfigError, match=r"seatrial.yaml:3: YAML syntax error"):
        load_config(tmp_path)


def test_a_file_that_is_not_a_mapping_is_refused(tmp_path: Path) -> None:
    write_config(tmp_path, "- project\n")
    with pytest.raises(ConfigError, match="not a mapping of settings"):
        load_config(tmp_path)


def test_db_url_precedence_is_flag_then_environment_then_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(tmp_path, "db: sqlite:///from-file.db\n")
    config = load_config(tmp_path)
    monkeypatch.delenv(DB_URL_ENV, raising=False)
    assert resolve_db_url(None, config) == "sqlite:///from-file.db"
    monkeypatch.setenv(DB_URL_ENV, "sqlite:///from-env.db")
    assert resolve_db_url(None, config) == "sqlite:///from-env.db"
    assert resolve_db_url("sqlite:///from-flag.db", config) == "sqlite:///from-flag.db"


def test_no_db_anywhere_means_the_default_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(DB_URL_ENV, raising=False)
    assert resolve_db_url(None, load_config(tmp_path)) is None
    monkeypatch.setenv(DB_URL_ENV, "")  # set but empty counts as unset
    assert resolve_db_url(None, load_config(tmp_path)) is None


def test_store_settings_read_db_and_language_and_nothing_else(tmp_path: Path) -> None:
    # The other keys are not read: a section only a run needs cannot stop `seatrial runs`.
    write_config(tmp_path, "db: sqlite:///x.db\nlanguage: zh-CN\nalerts: {feishu: 3}\n")
    settings = read_store_settings(tmp_path)
    assert (settings.db, settings.language) == ("sqlite:///x.db", "zh_CN")
    assert settings.project_dir == tmp_path.resolve()
    assert resolve_db_url(None, settings) == "sqlite:///x.db"
    with pytest.raises(ConfigError):
        load_config(tmp_path)  # what every other command reads refuses the file


def test_store_settings_without_a_file_are_the_defaults(tmp_path: Path) -> None:
    settings = read_store_settings(tmp_path)
    assert (settings.db, settings.language, settings.file) == (None, None, None)
    assert settings.project_dir == tmp_path.resolve()


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("project: p\nlanguage: fr\n", r"seatrial.yaml:2: .*fr"),
        ("project: p\ndb: [1, 2]\n", r"seatrial.yaml:2: `db` must be text"),
        ("project: p\nrun:\n  concurrency: [8\n", r"seatrial.yaml:3: YAML syntax error"),
    ],
)
def test_store_settings_report_a_bad_file_as_loading_it_does(
    tmp_path: Path, text: str, said: str
) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError, match=said):
        read_store_settings(tmp_path)


def test_every_key_is_documented_in_configuration_md() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    keys = [name for name in ConfigFile.model_fields]
    keys += [f"agents.NAME.{name}" for name in AgentConfig.model_fields]
    keys += [f"run.{name}" for name in RunDefaults.model_fields]
    assert [key for key in keys if f"| `{key}` |" not in doc] == []


def test_the_judge_and_gateway_sections_are_their_packages_own_settings(tmp_path: Path) -> None:
    write_config(
        tmp_path,
        """
        models:
          judge: {provider: openai, model: gpt-4o-2024-08-06}
        gateway:
          budgets: {run_usd: 5}
        judge: {model: judge, min_agreement: 0.9, min_labels: 50}
        """,
    )
    config = load_config(tmp_path)
    assert isinstance(config.judge, JudgeSettings)
    assert (config.judge.model, config.judge.min_agreement, config.judge.min_labels) == (
        "judge",
        0.9,
        50,
    )
    gateway = config.gateway_config()
    assert isinstance(gateway, GatewayConfig)
    assert set(gateway.models) == {"judge"}
    assert gateway.budgets.run_usd == 5


def test_a_bad_judge_setting_is_reported_at_its_line_with_the_allowed_range(
    tmp_path: Path,
) -> None:
    write_config(
        tmp_path,
        """
        project: booking-agent
        judge:
          min_agreement: 1.5
        """,
    )
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    message = str(caught.value)
    assert "seatrial.yaml:3" in message
    assert "judge.min_agreement" in message and "1.5" in message
