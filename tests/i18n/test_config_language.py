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
