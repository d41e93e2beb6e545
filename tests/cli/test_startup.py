"""Starting ``seatrial`` loads no library that only a running command needs.

Each command imports the store, the model SDK, the web server or the clustering library
inside its function, so ``seatrial --help`` and ``import seatrial.cli`` stay fast. Every check
runs in a fresh interpreter: what this test process imported says nothing about it. What
starting loaded is then frozen out of the garbage collector's passes while the command runs,
and the collector is put back afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HEAVY = frozenset(
    {
        "alembic",
        "fastapi",
        "httpx",
        "numpy",
        "openai",
        "openpyxl",
        "scipy",
        "sklearn",
        "sqlalchemy",
        "starlette",
        "uvicorn",
    }
)
"""Third-party libraries a command may need when it runs, never to start."""

RUNNING_ONLY = frozenset(
    {
        "seatrial._execute",
        "seatrial.gateway",
        "seatrial.run",
        "seatrial.store",
        "seatrial.web",
    }
)
"""Seatrial's packages that bring those libraries with them."""

_LOADED = """
import json, sys
{work}
sys.stderr.write("\\n" + json.dumps(sorted(sys.modules)))
"""

_COMMAND = """
sys.argv = ["seatrial", *{args!r}]
from seatrial.cli import main
try:
    main()
except SystemExit:
    pass
"""


def loaded(work: str, cwd: Path) -> tuple[set[str], str]:
    """The modules a fresh interpreter holds after ``work``, and what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED.format(work=work)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
        check=True,
    )
    return set(json.loads(done.stderr.splitlines()[-1])), done.stdout


def unwanted(modules: set[str]) -> list[str]:
    """The heavy libraries and running-only packages among ``modules``."""
    tops = {name.split(".")[0] for name in modules}
    packages = {".".join(name.split(".")[:2]) for name in modules}
    return sorted((tops & HEAVY) | (packages & RUNNING_ONLY))


def test_importing_the_cli_loads_no_library_a_command_needs_only_when_it_runs(tmp_path):
    modules, _ = loaded("import seatrial.cli", tmp_path)
    assert "seatrial.cli" in modules
    assert unwanted(modules) == []


def test_seatrial_help_lists_the_commands_without_loading_them(tmp_path):
    modules, out = loaded(_COMMAND.format(args=["--help"]), tmp_path)
    assert "ingest" in out and "datasets" in out and "failures" in out
    assert unwanted(modules) == []


def test_a_command_help_loads_nothing_more(tmp_path):
    modules, out = loaded(_COMMAND.format(args=["cases", "expand", "--help"]), tmp_path)
    assert "--n" in out
    assert unwanted(modules) == []


def test_the_probe_sees_a_heavy_import(tmp_path):
    modules, _ = loaded("import seatrial.cli\nfrom seatrial.store import Store", tmp_path)
    assert {"seatrial.store", "sqlalchemy"} <= set(unwanted(modules))


NOT_TO_START = frozenset({"asyncio", "click", "httpx", "jsonschema", "pydantic"})
"""Libraries ``seatrial --help`` does without (``click`` comes only with httpx: Typer carries its
own). A command's own parameters load pydantic: Typer coerces them through its TypeAdapters.
Pygments is not among them: Typer's help renderer loads it with Rich's Markdown."""

TRACE_READERS = frozenset({"seatrial.record", "seatrial.trace._formats", "seatrial.trace._span"})
"""The pydantic models and readers of traces and records: ``seatrial ingest --help`` lists the
format names and ``seatrial worker --help`` the default concurrency without them."""

SUITES = Path(__file__).resolve().parents[2] / "examples" / "booking" / "suites"


def tops(modules: set[str]) -> set[str]:
    """The top-level packages among ``modules``."""
    return {name.split(".")[0] for name in modules}


def test_seatrial_help_loads_no_pydantic_and_no_http_client(tmp_path):
    modules, out = loaded(_COMMAND.format(args=["--help"]), tmp_path)
    assert "validate" in out and "runs" in out
    assert tops(modules) & NOT_TO_START == set()
    assert modules & TRACE_READERS == set()


def test_a_command_help_shows_trace_formats_and_defaults_without_their_models(tmp_path):
    for args, shown in (
        (["ingest", "--help"], "otlp-json, openinference, langfuse"),
        (["worker", "--help"], "[default: 8]"),
    ):
        modules, out = loaded(_COMMAND.format(args=args), tmp_path)
        assert shown in out
        assert modules & TRACE_READERS == set(), args
        assert tops(modules) & {"asyncio", "httpx", "jsonschema"} == set(), args
        assert unwanted(modules) == [], args


def test_the_probe_sees_pydantic_come_with_a_trace_name(tmp_path):
    # The trace package's names are imported when first used: asking for one loads it.
    modules, out = loaded("import seatrial.trace\nprint(seatrial.trace.Span.__name__)", tmp_path)
    assert out.strip() == "Span"
    assert "pydantic" in tops(modules)
    assert "seatrial.trace._span" in modules


def test_validate_loads_the_suite_models_and_nothing_a_run_needs(tmp_path):
    modules, out = loaded(_COMMAND.format(args=["validate", str(SUITES)]), tmp_path)
    assert "ok: 3 files valid" in out
    assert {"seatrial.case", "pydantic"} <= modules  # what validating needs
    # jsonschema checks a schema the suite gives; the example's suites give none.
    assert tops(modules) & {"asyncio", "httpx", "click", "jsonschema", "pygments"} == set()
    assert unwanted(modules) == []


def test_validate_loads_jsonschema_for_a_suite_that_gives_a_schema(tmp_path):
    suite = tmp_path / "schema.yaml"
    suite.write_text(
        "suite: s\nagent: python:m:f\ncases:\n  - id: a\n    input: hi\n    assertions:\n"
        "      - {type: is_json, value: {type: object, required: name}}\n"
    )
    command = _COMMAND.format(args=["validate", str(suite)])
    work = f"_err = sys.stderr\nsys.stderr = sys.stdout\n{command}\nsys.stderr = _err"
    modules, out = loaded(work, tmp_path)
    assert "invalid JSON schema" in out  # `required` must be a list
    assert "jsonschema" in tops(modules)
    suite.write_text(suite.read_text().replace("required: name", "required: [name]"))
    modules, out = loaded(work, tmp_path)
    assert "ok: 1 file valid" in out
    assert "jsonschema" in tops(modules)


EVALUATING = frozenset({"seatrial.assertion._evaluate", "seatrial.judge", "seatrial.record"})
"""What evaluating an attempt needs and checking a suite does not: the evaluator, the judge's
handle and the result records (``seatrial.record`` with its settings, ~20 pydantic models)."""


def test_validate_checks_parameters_without_the_evaluator_or_the_records(tmp_path):
    modules, out = loaded(_COMMAND.format(args=["validate", str(SUITES)]), tmp_path)
    assert "ok: 3 files valid" in out
    assert {"seatrial.assertion._l2", "seatrial.assertion._l1_params"} <= modules
    assert modules & EVALUATING == set()
    assert tops(modules) & {"alembic", "sqlalchemy"} == set()


def test_validate_reports_a_bad_parameter_without_the_evaluator(tmp_path):
    suite = tmp_path / "bad.yaml"
    suite.write_text(
        "suite: s\nagent: python:m:f\ncases:\n  - id: a\n    input: hi\n"
        "    assertions:\n      - {type: contains, valeu: x}\n"
    )
    # The problems go to standard error, which the probe keeps for its module list.
    command = _COMMAND.format(args=["validate", str(suite)])
    work = f"_err = sys.stderr\nsys.stderr = sys.stdout\n{command}\nsys.stderr = _err"
    modules, out = loaded(work, tmp_path)
    assert "did you mean `value`?" in out
    assert modules & EVALUATING == set()


def test_the_probe_sees_the_evaluator_come_with_its_name(tmp_path):
    # The evaluator is imported when first asked for: asking for it loads the records.
    modules, out = loaded(
        "import seatrial.assertion\nprint(seatrial.assertion.evaluate.__name__)", tmp_path
    )
    assert out.strip() == "evaluate"
    assert EVALUATING - {"seatrial.judge"} <= modules


def test_runs_lists_stored_runs_loading_the_store_but_no_http_client(tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    loaded(_COMMAND.format(args=["demo", "--db", db, "--report-dir", "report"]), tmp_path)
    modules, out = loaded(_COMMAND.format(args=["runs", "--db", db]), tmp_path)
    assert "seatrial.demo.agents:v1" in out and "seatrial.demo.agents:v2" in out
    assert {"seatrial.store", "sqlalchemy"} <= set(unwanted(modules))
    assert tops(modules) & {"alembic", "click", "httpx", "jsonschema", "pygments"} == set()
    assert {".".join(name.split(".")[:2]) for name in modules} & {
        "seatrial.assertion",
        "seatrial.run",
        "seatrial._execute",
        "seatrial.web",
    } == set()


LISTING_WITHOUT = frozenset(
    {
        "seatrial.case",
        "seatrial.config._file",
        "seatrial.record",
        "seatrial.store._store",
        "seatrial.trace._span",
        "sqlalchemy.dialects.postgresql",
    }
)
"""What listing runs does without: the project's models (every key of ``seatrial.yaml``), the
records and traces the rest of the store reads, and SQLAlchemy's PostgreSQL dialect for a
SQLite store."""


def test_runs_lists_runs_without_the_records_or_the_project_models(tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    loaded(_COMMAND.format(args=["demo", "--db", db, "--report-dir", "report"]), tmp_path)
    (tmp_path / "seatrial.yaml").write_text(f"project: p\ndb: {db}\nlanguage: zh\n")
    modules, out = loaded(_COMMAND.format(args=["runs"]), tmp_path)
    assert "seatrial.demo.agents:v1" in out and "已完成" in out  # db: and language: were read
    assert modules & LISTING_WITHOUT == set()


def test_runs_reads_the_whole_project_file_to_report_a_bad_value(tmp_path):
    (tmp_path / "seatrial.yaml").write_text("project: p\nlanguage: fr\n")
    command = _COMMAND.format(args=["runs"])
    work = f"_err = sys.stderr\nsys.stderr = sys.stdout\n{command}\nsys.stderr = _err"
    modules, out = loaded(work, tmp_path)
    assert "seatrial.yaml" in out and ":2" in out and "fr" in out
    assert "seatrial.config._file" in modules


def test_a_command_loads_the_store_when_it_runs(tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    modules, out = loaded(_COMMAND.format(args=["runs", "--db", db]), tmp_path)
    assert "no runs stored yet" in out
    assert {"seatrial.store", "sqlalchemy"} <= set(unwanted(modules))


def test_opening_a_new_or_current_store_loads_no_migration_tool(tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    for _ in ("creates the store", "opens it again"):
        modules, out = loaded(_COMMAND.format(args=["runs", "--db", db]), tmp_path)
        assert "no runs stored yet" in out
        assert "sqlalchemy" in unwanted(modules)
        assert "alembic" not in unwanted(modules)


def test_a_command_freezes_what_starting_it_loaded_and_puts_the_collector_back() -> None:
    import gc

    from seatrial.cli._app import COMMAND_GC_THRESHOLD, command_gc

    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with command_gc():
        assert gc.get_threshold()[0] == COMMAND_GC_THRESHOLD
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_objects_a_caller_froze_stay_frozen_after_a_command() -> None:
    import gc

    from seatrial.cli._app import command_gc

    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with command_gc():
            pass
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


_SCRIPT = """
import atexit, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from seatrial.cli import console_script

pool = ThreadPoolExecutor(1)  # kept, its worker idle, never shut down
pool.submit(lambda: None)

def late() -> None:
    time.sleep(0.2)
    print("thread finished", flush=True)

threading.Thread(target=late).start()
atexit.register(lambda: print("atexit ran"))
sys.argv = ["seatrial", *{args!r}]
console_script()
print("not reached")
"""


def script(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The console script's entry point run with ``args`` in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(args=args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def test_the_console_script_ends_the_process_as_the_interpreter_would(tmp_path):
    # It skips only the interpreter's teardown: threads finish, atexit handlers run, the
    # output is flushed, and the exit status is the command's.
    done = script(["--help"], tmp_path)
    assert done.returncode == 0
    assert "Usage" in done.stdout and "not reached" not in done.stdout
    assert done.stdout.index("thread finished") < done.stdout.index("atexit ran")


def test_the_console_script_exits_with_the_command_s_status(tmp_path):
    done = script(["no-such-command"], tmp_path)
    assert done.returncode == 2
    assert "No such command" in done.stderr
    assert "atexit ran" in done.stdout
