"""Hostile output paths and option values: every command that takes ``-o`` against every kind of
path (absent, a file, a folder, links to a file, a folder and nothing, a FIFO, a link to
``/dev/null``, a dataset's own file, ``''``), and numbers and JSON that are not what they seem.

The rules are :mod:`npgym.outputs`': a file is replaced through a temporary file, a device or
FIFO is written in place and never replaced, anything else (a folder, a link to anything but a
device or FIFO, an empty path, a dataset's own file) is refused with one line and left as it
was. The real ``/dev/null`` is only ever reached through a link in ``tmp_path`` (so that code
that replaced its output would replace the link, never the device), and checked afterwards.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis.strategies import (
    booleans,
    dictionaries,
    floats,
    integers,
    lists,
    none,
    recursive,
    text,
)

from npgym import commands, outputs
from npgym.cli import main
from npgym.npbench.build import BuildSpec
from npgym.outputs import (
    OutputError,
    check_output_folder,
    open_binary_output,
    open_output,
    refuse_overwriting,
)

SPEC = BuildSpec(tasks=("SubsetSum",), n=2, mix={"easy": 1.0})
"""The bench folder that ``built`` and ``copy`` (tests/conftest.py) hold: two easy instances."""

VICTIM = "must not change\n"


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every command from ``tmp_path``: a path that falls back to the current folder lands
    there, never in the repository."""
    monkeypatch.chdir(tmp_path)


def _refused(result: Result) -> str:
    """The one ``Error:`` line of a refused command (no traceback, non-zero exit)."""
    assert result.exit_code != 0, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    assert "Traceback" not in result.output, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("Error:"), result.output
    return lines[-1]


def _ok(result: Result) -> None:
    assert result.exit_code == 0, (result.output, result.exception)


@contextmanager
def _fifo_reader(path: Path) -> Iterator[bytearray]:
    """A reader on the FIFO ``path`` (so a writer never blocks), collecting what it reads; when
    the block ends without a writer having come, the reader is released with an empty write."""
    received = bytearray()

    def read() -> None:
        with open(path, "rb") as fifo:
            received.extend(fifo.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        while thread.is_alive() and _is_fifo(path):
            try:
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            except OSError as error:  # ENXIO: the reader has not opened it yet
                if error.errno != errno.ENXIO:
                    raise
            thread.join(timeout=0.05)
        thread.join(timeout=5)


def _is_fifo(path: Path) -> bool:
    return os.path.lexists(path) and stat.S_ISFIFO(os.lstat(path).st_mode)


# --- the kinds of path ------------------------------------------------------------------------


def _absent(tmp_path: Path, copy: Path) -> Path:
    return tmp_path / "new" / "out.bin"


def _regular(tmp_path: Path, copy: Path) -> Path:
    path = tmp_path / "old.bin"
    path.write_text("earlier output\n")
    return path


def _folder(tmp_path: Path, copy: Path) -> Path:
    path = tmp_path / "folder"
    path.mkdir()
    (path / "kept.txt").write_text(VICTIM)
    return path


def _link_to_file(tmp_path: Path, copy: Path) -> Path:
    (tmp_path / "victim.txt").write_text(VICTIM)
    (tmp_path / "link").symlink_to(tmp_path / "victim.txt")
    return tmp_path / "link"


def _link_to_folder(tmp_path: Path, copy: Path) -> Path:
    _folder(tmp_path, copy)
    (tmp_path / "link").symlink_to(tmp_path / "folder", target_is_directory=True)
    return tmp_path / "link"


def _dangling_link(tmp_path: Path, copy: Path) -> Path:
    (tmp_path / "link").symlink_to(tmp_path / "nothing")
    return tmp_path / "link"


def _fifo(tmp_path: Path, copy: Path) -> Path:
    os.mkfifo(tmp_path / "fifo")
    return tmp_path / "fifo"


def _link_to_dev_null(tmp_path: Path, copy: Path) -> Path:
    (tmp_path / "null").symlink_to("/dev/null")
    return tmp_path / "null"


def _dataset_file(tmp_path: Path, copy: Path) -> Path:
    return copy / "SubsetSum.jsonl"


def _dataset_manifest(tmp_path: Path, copy: Path) -> Path:
    return copy / "manifest.json"


Kind = Callable[[Path, Path], Path]
FILE_KINDS: dict[str, tuple[Kind, str]] = {
    # name: (make the path, what must happen: written / streamed / refused)
    "absent": (_absent, "written"),
    "regular": (_regular, "written"),
    "folder": (_folder, "refused"),
    "link-to-file": (_link_to_file, "refused"),
    "link-to-folder": (_link_to_folder, "refused"),
    "dangling-link": (_dangling_link, "refused"),
    "fifo": (_fifo, "streamed"),
    "link-to-dev-null": (_link_to_dev_null, "streamed"),
    "dataset-file": (_dataset_file, "refused"),
    "dataset-manifest": (_dataset_manifest, "refused"),
}


def _snapshot(root: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry under ``root``: its kind and its bytes (a file) or target (a link)."""
    entries: dict[str, tuple[str, bytes | str]] = {}
    for path in sorted(root.rglob("*")):
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            entries[str(path)] = ("link", os.readlink(path))
        elif stat.S_ISREG(mode):
            entries[str(path)] = ("file", path.read_bytes())
        else:
            entries[str(path)] = ("other", stat.filemode(mode))
    return entries


def _generate(copy: Path, output: str) -> list[str]:
    return [
        "generate",
        "SubsetSum",
        "--tier",
        "easy",
        "-n",
        "1",
        "--reference",
        "none",
        "-o",
        output,
    ]


def _score(copy: Path, output: str) -> list[str]:
    return ["score", str(copy / "SubsetSum.jsonl"), "-o", output]


def _export(copy: Path, output: str) -> list[str]:
    return ["export", str(copy), "--format", "jsonl", "--no-verify", "-o", output]


def _show(copy: Path, output: str) -> list[str]:
    return ["show", str(copy), "--reference", "-o", output]


FILE_COMMANDS = {"generate": _generate, "score": _score, "export": _export, "show": _show}


@contextmanager
def _reader_if_fifo(path: Path) -> Iterator[bytearray]:
    """:func:`_fifo_reader` when ``path`` is a FIFO, else an empty buffer."""
    if _is_fifo(path):
        with _fifo_reader(path) as received:
            yield received
    else:
        yield bytearray()


@pytest.mark.parametrize("kind", FILE_KINDS)
@pytest.mark.parametrize("command", FILE_COMMANDS)
def test_file_outputs(command: str, kind: str, tmp_path: Path, copy: Path) -> None:
    """generate, score, export and show, each against every kind of output path."""
    make, expected = FILE_KINDS[kind]
    target = make(tmp_path, copy)
    before = _snapshot(tmp_path)
    with _reader_if_fifo(target) as received:
        result = CliRunner().invoke(main, FILE_COMMANDS[command](copy, str(target)))
    after = _snapshot(tmp_path)
    if expected == "refused":
        _refused(result)
        assert after == before, "a refused output changed something"
        return
    _ok(result)
    if expected == "written":
        assert stat.S_ISREG(os.lstat(target).st_mode)
        assert target.read_bytes() and target.read_bytes() != b"earlier output\n"
        assert stat.S_IMODE(target.stat().st_mode) & 0o444, "a new file must be readable"
        leftovers = [path for path in target.parent.iterdir() if path.name.endswith(".tmp")]
        assert not leftovers
    else:  # streamed: the FIFO or the link stays what it was
        assert after == before
        if kind == "fifo":
            assert stat.S_ISFIFO(os.lstat(target).st_mode) and received
        else:
            assert stat.S_ISLNK(os.lstat(target).st_mode)
            assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_refused_output_is_refused_before_the_work(tmp_path: Path, copy: Path) -> None:
    """score reads and scores every row before it writes: a bad ``-o`` must fail first."""
    target = _link_to_file(tmp_path, copy)
    result = CliRunner().invoke(main, _score(copy, str(target)))
    assert "symbolic link" in _refused(result)
    assert "warning" not in result.output


@pytest.mark.parametrize("name", ["SubsetSum.jsonl", "manifest.json"])
def test_show_never_overwrites_the_datasets_own_files(copy: Path, name: str) -> None:
    """``show DATASET --reference -o DATASET/TSP.jsonl`` wrote a PNG over the task file, exit 0."""
    before = (copy / name).read_bytes()
    line = _refused(CliRunner().invoke(main, _show(copy, str(copy / name))))
    assert "own files" in line
    assert (copy / name).read_bytes() == before


def test_show_and_score_never_overwrite_their_input(copy: Path, tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_bytes((copy / "SubsetSum.jsonl").read_bytes())
    for command in (["show", str(rows), "--reference"], ["score", str(rows)]):
        line = _refused(CliRunner().invoke(main, [*command, "-o", str(rows)]))
        assert "own files" in line or "input files" in line
        assert rows.read_bytes() == (copy / "SubsetSum.jsonl").read_bytes()


def test_a_link_to_standard_output_writes_to_the_pipe(tmp_path: Path) -> None:
    """``-o /dev/stdout`` writes to the pipe that standard output is. The link is one in
    ``tmp_path`` (code that replaced its output would replace it, not the system's)."""
    stdout = tmp_path / "stdout"
    stdout.symlink_to("/dev/stdout")
    command = ["generate", "SubsetSum", "--tier", "easy", "-n", "2", "--reference", "none"]
    done = subprocess.run(
        [sys.executable, "-m", "npgym", *command, "-o", str(stdout)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["task"] for line in done.stdout.splitlines()] == ["SubsetSum"] * 2
    assert stdout.is_symlink() and os.readlink(stdout) == "/dev/stdout"


def test_compare_refuses_a_linked_picture_folder(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"source": "a", "tasks": {}, "overall": {}}))
    target = _link_to_folder(tmp_path, tmp_path)
    command = ["eval", "--compare", str(report), str(report), "-o", str(target)]
    assert "symbolic link" in _refused(CliRunner().invoke(main, command))
    assert not (tmp_path / "folder" / "compare.png").exists()


@pytest.mark.parametrize("command", ["generate", "show"])
def test_an_empty_file_output_is_refused(command: str, copy: Path) -> None:
    line = _refused(CliRunner().invoke(main, FILE_COMMANDS[command](copy, "")))
    assert "empty" in line


def test_export_parquet_to_a_fifo_and_a_file(copy: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    fifo = _fifo(tmp_path, copy)
    with _fifo_reader(fifo) as received:
        command = ["export", str(copy), "--format", "parquet", "--no-verify", "-o", str(fifo)]
        _ok(CliRunner().invoke(main, command))
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and received[:4] == b"PAR1"
    output = tmp_path / "rows.parquet"
    command = ["export", str(copy), "--format", "verl", "--no-verify", "-o", str(output)]
    _ok(CliRunner().invoke(main, command))
    assert output.read_bytes()[:4] == b"PAR1"


# --- output folders ---------------------------------------------------------------------------

FOLDER_KINDS: dict[str, tuple[Kind, str]] = {
    "absent": (_absent, "written"),
    "folder": (_folder, "written"),
    "regular": (_regular, "refused"),
    "link-to-folder": (_link_to_folder, "refused"),
    "dangling-link": (_dangling_link, "refused"),
    "fifo": (_fifo, "refused"),
    "link-to-dev-null": (_link_to_dev_null, "refused"),
}


def _build(tmp_path: Path, output: str) -> list[str]:
    return [
        "bench", "build", "-o", output, "--tasks", "SubsetSum", "--n", "1",
        "--tier", "easy", "--reference", "none",
    ]  # fmt: skip


def _import(tmp_path: Path, output: str) -> list[str]:
    source = tmp_path / "questions.json"
    knapsack = {"capacity": 5, "items": {"0": {"weight": 2, "value": 3}}}
    source.write_text(json.dumps({"questions": {"question1": knapsack}}))
    return ["import", "np-engine", str(source), "-o", output]


FOLDER_COMMANDS = {"bench build": _build, "import np-engine": _import}


@pytest.mark.parametrize("kind", FOLDER_KINDS)
@pytest.mark.parametrize("command", FOLDER_COMMANDS)
def test_folder_outputs(command: str, kind: str, tmp_path: Path, copy: Path) -> None:
    """bench build and import np-engine, each against every kind of output folder."""
    make, expected = FOLDER_KINDS[kind]
    target = make(tmp_path, copy)
    arguments = FOLDER_COMMANDS[command](tmp_path, str(target))
    before = _snapshot(tmp_path)
    with _reader_if_fifo(target):
        result = CliRunner().invoke(main, arguments)
    if expected == "refused":
        _refused(result)
        assert _snapshot(tmp_path) == before
    else:
        _ok(result)
        assert (target / "manifest.json").is_file()


BUILD_NAMES = [
    "SubsetSum.jsonl",
    "manifest.json",
    ".lock",
    ".journal/spec.json",
    ".journal/rows.jsonl",
]
"""Every file a build writes into its output folder (the folder may come from elsewhere)."""


@pytest.mark.parametrize("planted", ["link-to-file", "dangling-link", "fifo", "folder"])
@pytest.mark.parametrize("name", BUILD_NAMES)
def test_a_build_writes_nothing_through_what_is_planted_in_its_folder(
    name: str, planted: str, tmp_path: Path
) -> None:
    """A link, FIFO or folder planted under a name a build writes is refused with one line:
    the link's target is left byte for byte, and nothing blocks on the FIFO."""
    out = tmp_path / "out"
    target = out / name
    target.parent.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM)
    if planted == "link-to-file":
        target.symlink_to(victim)
    elif planted == "dangling-link":
        target.symlink_to(tmp_path / "nothing")
    elif planted == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    _refused(CliRunner().invoke(main, _build(tmp_path, str(out))))
    assert victim.read_text() == VICTIM
    assert not (tmp_path / "nothing").exists()


@pytest.mark.parametrize("kind", ["regular", "link-to-folder", "dangling-link", "fifo"])
def test_eval_report_folders(kind: str, tmp_path: Path, copy: Path) -> None:
    make, _ = FOLDER_KINDS[kind]
    target = make(tmp_path, copy)
    before = _snapshot(tmp_path)
    command = ["eval", str(copy), "--agent", "greedy", "--no-gallery", "-o", str(target)]
    with _reader_if_fifo(target):
        _refused(CliRunner().invoke(main, command))
    assert _snapshot(tmp_path) == before


def test_eval_writes_no_report_through_links_planted_in_the_dataset(
    tmp_path: Path, copy: Path
) -> None:
    """The default report folder is inside the dataset (``<dataset>/eval-<source>``), which may
    come from a stranger: a link planted there must not carry the report elsewhere."""
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM)
    (copy / "eval-greedy").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir()
    command = ["eval", str(copy), "--agent", "greedy", "--no-gallery"]
    assert "symbolic link" in _refused(CliRunner().invoke(main, command))
    assert not any((tmp_path / "elsewhere").iterdir())
    (copy / "eval-greedy").unlink()
    (copy / "eval-greedy").mkdir()
    (copy / "eval-greedy" / "report.md").symlink_to(victim)
    assert "symbolic link" in _refused(CliRunner().invoke(main, command))
    assert victim.read_text() == VICTIM


@pytest.mark.parametrize("name", ["report.json", "report.md", "report.png", "completions.jsonl"])
@pytest.mark.parametrize("kind", ["link-to-dev-null", "fifo"])
def test_eval_writes_no_report_into_devices_planted_in_the_dataset(
    name: str, kind: str, tmp_path: Path, copy: Path
) -> None:
    """A link to a device (``report.json -> /dev/...``) or a FIFO planted in the default report
    folder is refused: inside an output folder npgym writes only regular files."""
    folder = copy / "eval-greedy"
    folder.mkdir()
    made = FILE_KINDS[kind][0](tmp_path, copy)
    made.rename(folder / name)
    planted = os.lstat(folder / name)
    command = ["eval", str(copy), "--agent", "greedy", "--no-gallery"]
    with _reader_if_fifo(folder / name) as received:
        line = _refused(CliRunner().invoke(main, command))
    assert "only regular files" in line and not received
    now = os.lstat(folder / name)
    assert (now.st_ino, now.st_mode) == (planted.st_ino, planted.st_mode)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_eval_writes_its_report_into_a_new_folder(tmp_path: Path, copy: Path) -> None:
    report = tmp_path / "report"
    command = ["eval", str(copy), "--agent", "greedy", "--no-gallery", "-o", str(report)]
    _ok(CliRunner().invoke(main, command))
    assert {path.name for path in report.iterdir()} >= {"report.json", "report.md", "report.png"}


@pytest.mark.parametrize(
    "arguments",
    [
        _build(Path(), ""),
        ["import", "np-engine", "x.json", "-o", ""],
        ["eval", ".", "--agent", "greedy", "-o", ""],
    ],
    ids=["bench build", "import np-engine", "eval"],
)
def test_an_empty_folder_output_is_refused(arguments: list[str], tmp_path: Path) -> None:
    """``bench build -o ''`` built into the current folder."""
    (tmp_path / "x.json").write_text("{}")
    assert "empty" in _refused(CliRunner().invoke(main, arguments))
    assert not (tmp_path / "manifest.json").exists()


@pytest.mark.parametrize(
    "model", [commands.BuildOptions, commands.ExportOptions, commands.ShowOptions]
)
def test_an_empty_output_is_refused_by_the_options_models(model: type[commands.Options]) -> None:
    """Python callers too: ``Path('')`` would be the current folder."""
    values = {"output": "", "dataset": "d", "fmt": "jsonl", "source": "s"}
    values = {key: value for key, value in values.items() if key in model.model_fields}
    with pytest.raises(commands.OptionsError, match="empty"):
        commands.parse_options(model, values)


# --- the helper, directly ----------------------------------------------------------------------


def test_a_failed_write_leaves_the_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("before\n")

    def fail_halfway() -> None:
        with open_output(target) as handle:
            handle.write("half")
            raise RuntimeError("the disk is full")

    with pytest.raises(RuntimeError):
        fail_halfway()
    assert target.read_text() == "before\n"
    assert [path.name for path in tmp_path.iterdir()] == ["out.txt"]


def test_a_replaced_file_keeps_its_mode_and_a_planted_temporary_is_not_followed(
    tmp_path: Path,
) -> None:
    """The old helper wrote to ``.<name>.<pid>.tmp`` with ``open(..., 'w')``: a link planted
    under that name sent the write to its target."""
    target = tmp_path / "out.txt"
    target.write_text("before\n")
    target.chmod(0o640)
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM)
    (tmp_path / f".out.txt.{os.getpid()}.tmp").symlink_to(victim)
    with open_output(target) as handle:
        handle.write("after\n")
    assert target.read_text() == "after\n" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert victim.read_text() == VICTIM


def test_a_new_file_gets_the_umask_mode(tmp_path: Path) -> None:
    """mkstemp's 0600 would make every output private to its writer."""
    umask = os.umask(0o022)
    try:
        with open_output(tmp_path / "new.txt") as handle:
            handle.write("x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


@pytest.mark.parametrize("taken", [outputs.TEMPORARY_NAME_TRIES - 1, outputs.TEMPORARY_NAME_TRIES])
def test_temporary_names_tried_at_and_past_the_limit(
    taken: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each taken name (here: links planted under the next random names) is skipped, never
    followed; after TEMPORARY_NAME_TRIES taken names the write is refused."""
    names = iter(f"{index:012x}" for index in range(100))
    monkeypatch.setattr(outputs.secrets, "token_hex", lambda _: next(names))
    victim = tmp_path / "victim.txt"
    victim.write_text(VICTIM)
    for index in range(taken):
        (tmp_path / f".out.txt.{index:012x}.tmp").symlink_to(victim)
    target = tmp_path / "out.txt"
    if taken < outputs.TEMPORARY_NAME_TRIES:
        with open_output(target) as handle:
            handle.write("written\n")
        assert target.read_text() == "written\n"
    else:
        with pytest.raises(OutputError, match="no free temporary name"), open_output(target):
            pass
        assert not target.exists()
    assert victim.read_text() == VICTIM


def test_a_socket_is_refused(tmp_path: Path) -> None:
    import socket

    path = tmp_path / "s"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(OutputError, match="a socket"), open_binary_output(path):
            pass
        with pytest.raises(OutputError, match="a socket, not a folder"):
            check_output_folder(path)


def test_refuse_overwriting_sees_through_other_spellings(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("{}\n")
    (tmp_path / "hard").hardlink_to(data)
    for spelling in (data, tmp_path / "sub" / ".." / "data.jsonl", tmp_path / "hard"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        with pytest.raises(OutputError, match="input files"):
            refuse_overwriting(spelling, [data], "the input")
    refuse_overwriting(tmp_path / "other.jsonl", [data], "the input")


# --- numbers -----------------------------------------------------------------------------------

FLOAT_OPTIONS = [
    ["generate", "SubsetSum", "-n", "1", "--difficulty"],
    ["generate", "SubsetSum", "-n", "1", "--time-limit"],
    ["bench", "build", "-o", "b", "--time-limit"],
    ["import", "np-engine", "x.json", "-o", "b", "--time-limit"],
    ["eval", ".", "--agent", "greedy", "--timeout"],
    ["eval", ".", "--agent", "greedy", "--top-p"],
    ["eval", ".", "--agent", "greedy", "--temperature"],
    ["serve", "npgym/SubsetSum-easy", "--idle-timeout"],
    ["serve", "npgym/SubsetSum-easy", "--message-timeout"],
]


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "1e999"])
@pytest.mark.parametrize("option", FLOAT_OPTIONS, ids=lambda option: f"{option[0]} {option[-1]}")
def test_a_float_option_that_is_not_a_number(option: list[str], value: str, tmp_path: Path) -> None:
    """NaN passed click's range check and was refused by pydantic as "should be less than or
    equal to ..."; infinity passed ranges without an upper end (``--timeout``)."""
    (tmp_path / "x.json").write_text("{}")
    line = _refused(CliRunner().invoke(main, [*option, value]))
    assert "not a number" in line or "not a finite number" in line
    assert "less than" not in line and "range" not in line


@pytest.mark.parametrize(
    ("option", "limit", "shown"),
    [
        ("--samples", commands.MAX_SAMPLES, "1<=x<=1024"),
        ("--max-retries", commands.MAX_RETRIES, "0<=x<=20"),
        ("--timeout", int(commands.MAX_REQUEST_TIMEOUT_S), "1<=x<=86400.0"),
    ],
)
def test_eval_limits_at_and_past(option: str, limit: int, shown: str) -> None:
    """``--max-retries 1000000000`` and ``--samples 1000000`` ran without bound."""
    arguments, field = [".", "--agent", "greedy", option], option[2:].replace("-", "_")
    eval_command = main.commands["eval"]
    context = eval_command.make_context("eval", [*arguments, str(limit)])
    assert getattr(commands.parse_options(commands.EvalOptions, context.params), field) == limit
    for past in (limit + 1, 10**9):
        with pytest.raises(click.BadParameter, match="range"):
            eval_command.make_context("eval", [*arguments, str(past)])
        with pytest.raises(commands.OptionsError, match=field):
            commands.parse_options(commands.EvalOptions, {**context.params, field: past})
    assert shown in "".join(CliRunner().invoke(main, ["eval", "--help"]).output.split())


def test_variants_at_and_past_the_limit(tmp_path: Path) -> None:
    """``--variants 100000000`` ran without bound."""
    build = main.commands["bench"].commands["build"]
    arguments = ["-o", "b", "--variants"]
    context = build.make_context("build", [*arguments, str(commands.MAX_VARIANTS)])
    assert commands.parse_options(commands.BuildOptions, context.params).variants == 100
    for past in (commands.MAX_VARIANTS + 1, 10**8):
        with pytest.raises(click.BadParameter, match="range"):
            build.make_context("build", [*arguments, str(past)])
        with pytest.raises(commands.OptionsError, match="variants"):
            commands.parse_options(commands.BuildOptions, {**context.params, "variants": past})
    help_text = CliRunner().invoke(main, ["bench", "build", "--help"]).output
    assert f"0<=x<={commands.MAX_VARIANTS}" in help_text


# --- JSON options ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"top_k": NaN}', "NaN"),
        ('{"top_k": Infinity}', "Infinity"),
        ('{"top_k": -Infinity}', "Infinity"),
        ('{"top_k": 1e999}', "not a finite number"),
        ('{"a": {"b": [1, {"c": NaN}]}}', "NaN"),
        ('[{"top_k": 20}]', "expected a JSON object"),
        ('"top_k"', "expected a JSON object"),
        ("null", "expected a JSON object"),
        ("20", "expected a JSON object"),
        ('{"top_k": 20', "not valid JSON"),
        ("", "not valid JSON"),
        ('{"stop": "\\ud800"}', "not valid text"),
        ("[" * 100_000, "nested too deeply"),
        ('{"n": ' + "9" * 5000 + "}", "--extra-body"),
    ],
    ids=lambda value: value[:24] if isinstance(value, str) else value,
)
def test_extra_body_that_is_not_a_json_object(text: str, says: str, tmp_path: Path) -> None:
    """``--extra-body '{"top_k":NaN}'`` gave a raw traceback; refused now before any work."""
    command = ["eval", str(tmp_path), "--endpoint", "http://127.0.0.1:9/v1", "--model", "m"]
    line = _refused(CliRunner().invoke(main, [*command, "--extra-body", text]))
    assert "--extra-body" in line and says in line


def test_overrides_refuse_numbers_json_has_not() -> None:
    command = ["generate", "TSP", "-n", "1", "--overrides", '{"n_max": NaN}']
    assert "--overrides: NaN" in _refused(CliRunner().invoke(main, command))


def test_an_honest_extra_body_is_kept() -> None:
    options = commands.parse_options(
        commands.EvalOptions,
        {"dataset": ".", "endpoint": "http://x/v1", "model": "m", "extra_body": '{"top_k": 20}'},
    )
    assert options.extra_body == '{"top_k": 20}'


_JSON = recursive(
    none() | booleans() | integers() | floats() | text(max_size=8),
    lambda children: lists(children, max_size=4) | dictionaries(text(max_size=4), children),
    max_leaves=12,
)


def _finite(value: object) -> bool:
    """Whether every number in a JSON value is finite."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_finite(item) for item in value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    return True


@given(value=_JSON)
@settings(max_examples=200, deadline=None)
def test_json_options_are_finite_objects_or_one_error(value: object) -> None:
    """Any JSON value (NaN and infinities included, which ``json.dumps`` writes as ``NaN`` and
    ``Infinity``): a finite object is taken as it is, anything else is one OptionsError."""
    text = json.dumps(value)
    if isinstance(value, dict) and _finite(value):
        assert commands._json_object(text, "--extra-body") == value
    else:
        with pytest.raises(commands.OptionsError, match=r"^--extra-body: "):
            commands._json_object(text, "--extra-body")
