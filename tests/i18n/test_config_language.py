"""``language:`` in seatrial.yaml: any accepted spelling, stored as the language it names; any
other value is an error of the file, naming the key and its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from seatrial.config import load_config
from seatrial.errors import ConfigError


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / "seatrial.yaml").write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("written", "language"), [("zh-CN", "zh_CN"), ("zh", "zh_CN"), ("en", "en")]
)
def test_language_key_takes_every_accepted_spelling(tmp_path, written, language):
    config = load_config(_project(tmp_path, f"project: p\nlanguage: {written}\n"))
    assert config.language == language


def test_without_the_key_the_project_names_no_language(tmp_path):
    assert load_config(_project(tmp_path, "project: p\n")).language is None


def test_an_unknown_language_is_an_error_of_the_file_with_its_line(tmp_path):
    with pytest.raises(ConfigError) as raised:
        load_config(_project(tmp_path, "project: p\nlanguage: fr\n"))
    message = str(raised.value)
    assert "`language`: 'fr' is not a language Seatrial speaks" in message
    assert ":2" in message and "en, zh" in message
    assert raised.value.exit_code == 2


def test_the_files_own_problems_read_in_the_readers_language(tmp_path):
    from seatrial.i18n import use_language

    (tmp_path / "seatrial.yaml").write_text(
        "project: p\nschedules:\n  - name: nightly\n    cron: '0 2 * * *'\n"
        "    timezone: Asia/Shanghia\n    tier: nightly\n"
    )
    with use_language("zh_CN"), pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    said = str(caught.value)
    assert said.startswith("seatrial.yaml 有误：")
    assert "seatrial.yaml:5：" in said and "'Asia/Shanghia' 不是 IANA 时区" in said
    with pytest.raises(ConfigError, match="'Asia/Shanghia' is not an IANA time zone"):
        load_config(tmp_path)
