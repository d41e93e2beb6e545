"""The shipped catalogs: compiled from the committed .po, covering every marked string, each
translation keeping its placeholders; and text read through them in the reader's language."""

from __future__ import annotations

import io
import shutil
import string
import subprocess
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.frontend import CommandLineInterface
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from seatrial.i18n import (
    LOCALE_DIR,
    N_,
    gettext,
    ngettext,
    pgettext,
    use_language,
)
from seatrial.record import FAILURE_TYPES, failure_type_word, verdict_word

ROOT = Path(__file__).resolve().parents[2]
PO = LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / "seatrial.po"
MO = PO.with_suffix(".mo")


def _read(path: Path) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle)


def _extracted(source: Path, tmp_path: Path) -> Catalog:
    """The strings marked in ``source`` (a folder holding the package ``seatrial``), as
    ``make catalogs`` extracts them: babel.cfg, Babel's default keywords and the Makefile's
    own (the messages of seatrial.i18n, which checks give as reasons)."""
    template = tmp_path / "extracted.pot"
    CommandLineInterface().run(
        ["pybabel", "--quiet", "extract", "-F", str(ROOT / "babel.cfg"), "--no-location"]
        # Babel skips folders whose names start with "_" unless told which to skip:
        # seatrial/_execute and gateway/_providers hold marked strings too.
        + ["--ignore-dirs", ".* __pycache__"]
        + ["-k", "phrased", "-k", "phrased_plural:1,2"]
        + ["-o", str(template), str(source)]
    )
    return _read(template)


def _key(message: Message) -> tuple[str | None, str]:
    first = message.id[0] if isinstance(message.id, tuple) else message.id
    return message.context, first


def _untranslated(extracted: Catalog, translated: Catalog) -> list[tuple[str | None, str]]:
    """Each marked string the translated catalog gives no non-empty, non-fuzzy text for."""
    by_key = {_key(m): m for m in translated if m.id}
    missing = []
    for message in extracted:
        if not message.id:
            continue
        found = by_key.get(_key(message))
        strings = () if found is None else found.string
        forms = [strings] if isinstance(strings, str) else list(strings)
        if found is None or found.fuzzy or not forms or not all(forms):
            missing.append(_key(message))
    return missing


def test_the_shipped_mo_is_what_the_committed_po_compiles_to():
    compiled = io.BytesIO()
    write_mo(compiled, _read(PO))
    assert MO.read_bytes() == compiled.getvalue(), "run `make catalogs` and commit the .mo"


def test_every_string_marked_in_the_package_has_a_chinese_translation(tmp_path):
    extracted = _extracted(ROOT / "src", tmp_path)
    assert len([m for m in extracted if m.id]) > 50  # the walk found the package's strings
    assert _untranslated(extracted, _read(PO)) == [], (
        "translate these in the zh_CN .po, then `make catalogs` (docs/i18n.md)"
    )


def test_a_newly_marked_string_without_a_translation_is_found(tmp_path):
    source = tmp_path / "src"
    package = source / "seatrial"
    package.mkdir(parents=True)
    shutil.copy(ROOT / "src" / "seatrial" / "report" / "_terminal.py", package / "_terminal.py")
    (package / "_new.py").write_text(
        "from seatrial.i18n import gettext as _\n\n"
        "def hello() -> str:\n"
        '    return _("a sentence nobody translated yet")\n',
        encoding="utf-8",
    )
    missing = _untranslated(_extracted(source, tmp_path), _read(PO))
    assert missing == [(None, "a sentence nobody translated yet")]


def test_help_text_and_a_commands_docstring_without_a_translation_are_found(tmp_path):
    source = tmp_path / "src"
    package = source / "seatrial" / "cli"
    package.mkdir(parents=True)
    (package / "_new.py").write_text(
        "import typer\n"
        "from seatrial.i18n import N_\n\n"
        "app = typer.Typer()\n\n"
        "@app.command()\n"
        'def greet(name: str = typer.Option("", help=N_("Whom to greet, untranslated."))):\n'
        '    """Greet someone; nobody translated this yet."""\n\n'
        "@app.command()\n"
        "def runs():\n"
        '    """List stored runs, newest first."""\n\n'
        "def helper():\n"
        '    """Not a command: its docstring is no help."""\n',
        encoding="utf-8",
    )
    missing = _untranslated(_extracted(source, tmp_path), _read(PO))
    assert sorted(missing) == [
        (None, "Greet someone; nobody translated this yet."),
        (None, "Whom to greet, untranslated."),
    ]


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def test_every_translation_keeps_the_placeholders_of_its_english():
    wrong = []
    for message in _read(PO):
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        expected = set().union(*(_fields(text) for text in ids))
        wrong += [(ids[0], text) for text in strings if _fields(text) != expected]
    assert wrong == []


def test_the_chinese_catalog_has_one_plural_form():
    assert _read(PO).plural_forms == "nplurals=1; plural=0;"
    with use_language("zh_CN"):
        one = ngettext(
            "{warned} WARNING attempt to review (not failures)",
            "{warned} WARNING attempts to review (not failures)",
            1,
        )
        two = ngettext(
            "{warned} WARNING attempt to review (not failures)",
            "{warned} WARNING attempts to review (not failures)",
            2,
        )
    assert one == two == "{warned} 次警告待人工复核（不算失败）"


def test_english_is_the_marked_text_itself_and_chinese_reads_the_catalog():
    assert gettext("gates:") == "gates:"
    assert pgettext("verdict", "FAIL") == "FAIL"
    with use_language("zh_CN"):
        assert gettext("gates:") == "门禁："
        assert pgettext("verdict", "FAIL") == "失败"
        assert N_("gates:") == "gates:"  # marks, never translates
    assert gettext("gates:") == "gates:"  # the block's language ended with it


def test_the_same_english_word_reads_by_its_context():
    with use_language("zh_CN"):
        assert pgettext("gate", "met") == "通过"  # the run's gate as a whole
        assert gettext("met") == "达标"  # one check of a gate


@pytest.mark.parametrize("failure_type", FAILURE_TYPES)
def test_every_built_in_failure_type_has_a_chinese_name_beside_its_identifier(failure_type):
    assert failure_type_word(failure_type) == failure_type
    with use_language("zh_CN"):
        shown = failure_type_word(failure_type)
    assert shown.endswith(f"（{failure_type}）") and len(shown) > len(failure_type) + 2


def test_a_plugins_failure_type_and_an_unknown_verdict_are_shown_as_written():
    with use_language("zh_CN"):
        assert failure_type_word("my_plugin_type") == "my_plugin_type"
        assert verdict_word("SKIPPED") == "SKIPPED"
        assert [verdict_word(v) for v in ("PASS", "FAIL", "WARNING", "ERROR")] == [
            "通过",
            "失败",
            "警告",
            "错误",
        ]


def test_the_catalogs_are_not_ignored_by_git_so_the_wheel_carries_them():
    # hatchling builds the wheel from the files git does not ignore
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    for path in (PO, MO):
        ignored = subprocess.run(
            ["git", "check-ignore", "-q", str(path)], cwd=ROOT, check=False
        ).returncode
        assert ignored == 1, f"{path} is ignored by git"
