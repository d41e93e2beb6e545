"""The reader's language: --lang, then SEATRIAL_LANG, then seatrial.yaml's language:, then the
locale, then English; a value written on purpose that names no language is bad input."""

from __future__ import annotations

import pytest

from seatrial.errors import InputError
from seatrial.i18n import language_of, locale_language, reader_language


@pytest.mark.parametrize(
    "written", ["zh", "zh-CN", "zh_CN", "zh_CN.UTF-8", "zh-Hans", "ZH-cn", "zh_CN.utf8"]
)
def test_every_spelling_of_simplified_chinese_is_zh_cn(written):
    assert language_of(written) == "zh_CN"


@pytest.mark.parametrize("written", ["en", "en-US", "en_GB.UTF-8", "EN"])
def test_every_english_tag_is_english(written):
    assert language_of(written) == "en"


@pytest.mark.parametrize("written", ["zh_TW", "zh-Hant", "zhx", "english", "fr_FR.UTF-8", "C", ""])
def test_a_tag_of_another_language_is_neither(written):
    assert language_of(written) is None


def test_the_option_wins_over_the_variable_the_file_and_the_locale():
    environ = {"SEATRIAL_LANG": "en", "LANG": "en_US.UTF-8"}
    assert reader_language("zh", "en", environ) == "zh_CN"
    assert reader_language("en", "zh_CN", {"SEATRIAL_LANG": "zh", "LANG": "zh_CN.UTF-8"}) == "en"


def test_without_the_option_the_variable_wins_over_the_file_and_the_locale():
    assert reader_language(None, "en", {"SEATRIAL_LANG": "zh-CN", "LANG": "C.UTF-8"}) == "zh_CN"
    assert reader_language(None, "zh_CN", {"SEATRIAL_LANG": "en", "LANG": "zh_CN"}) == "en"


def test_an_empty_variable_counts_as_unset():
    assert reader_language(None, "zh_CN", {"SEATRIAL_LANG": ""}) == "zh_CN"
    assert reader_language(None, None, {"SEATRIAL_LANG": "", "LANG": "zh_CN.UTF-8"}) == "zh_CN"


def test_without_the_option_or_the_variable_the_file_wins_over_the_locale():
    assert reader_language(None, "zh_CN", {"LANG": "en_US.UTF-8"}) == "zh_CN"
    assert reader_language(None, "en", {"LANG": "zh_CN.UTF-8"}) == "en"


def test_with_nothing_written_the_locale_decides():
    assert reader_language(None, None, {"LANG": "zh_CN.UTF-8"}) == "zh_CN"
    assert reader_language(None, None, {"LANG": "en_US.UTF-8"}) == "en"
    assert reader_language(None, None, {}) == "en"


def test_lc_all_wins_over_lc_messages_which_wins_over_lang():
    assert locale_language({"LC_ALL": "zh_CN.UTF-8", "LC_MESSAGES": "en_US", "LANG": "en"}) == (
        "zh_CN"
    )
    assert locale_language({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert locale_language({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US"}) == "zh_CN"
    assert locale_language({"LC_MESSAGES": "en_US", "LANG": "zh_CN.UTF-8"}) == "en"
    assert locale_language({"LC_ALL": "", "LANG": "zh_CN.UTF-8"}) == "zh_CN"


@pytest.mark.parametrize("locale", ["fr_FR.UTF-8", "C", "POSIX", "zh_TW.UTF-8", "garbage"])
def test_a_locale_we_have_no_catalog_for_is_english_without_complaint(locale):
    assert reader_language(None, None, {"LANG": locale}) == "en"
    # and it does not hide the variable's choice
    assert reader_language(None, None, {"LANG": locale, "SEATRIAL_LANG": "zh"}) == "zh_CN"


def test_an_unknown_option_is_bad_input_naming_the_option_and_what_is_accepted():
    with pytest.raises(InputError) as raised:
        reader_language("fr", None, {"LANG": "zh_CN.UTF-8"})
    message = str(raised.value)
    assert "--lang 'fr'" in message and "en, zh" in message and "zh-CN" in message
    assert raised.value.exit_code == 2


def test_an_unknown_variable_is_bad_input_naming_the_variable():
    with pytest.raises(InputError) as raised:
        reader_language(None, "zh_CN", {"SEATRIAL_LANG": "klingon"})
    assert "SEATRIAL_LANG 'klingon'" in str(raised.value)
    assert raised.value.exit_code == 2
