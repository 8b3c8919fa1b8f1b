"""The one error boundary of every console script: exit codes, one line, odd names, pipes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from crystal_lsp_hooks import clone_check

from crystal_lsp import __version__
from crystal_lsp.cli import main as cli_main
from crystal_lsp.clones.git import GitError
from crystal_lsp.errors import CrystalError, run_guarded

INTERNAL = (
    f"prog: internal error (crystal-lsp {__version__}), not a finding; "
    "please report it with this trace:"
)


def _raise(exc: BaseException) -> int:
    raise exc


@pytest.mark.parametrize(
    ("exc", "code", "line"),
    [
        pytest.param(CrystalError("bad input"), 2, "prog: error: bad input", id="usage"),
        pytest.param(CrystalError("found", exit_code=1), 1, "prog: error: found", id="exit-code"),
        pytest.param(
            GitError("git failed: git diff: fatal: bad object"),
            2,
            "prog: error: git failed: git diff: fatal: bad object",
            id="git",
        ),
        pytest.param(KeyboardInterrupt(), 130, "prog: interrupted", id="interrupt"),
    ],
)
def test_each_kind_is_one_line_and_an_exit_code(
    capsys: pytest.CaptureFixture[str], exc: BaseException, code: int, line: str
) -> None:
    assert run_guarded("prog", lambda: _raise(exc)) == code
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [line] and captured.out == ""


def test_an_unexpected_exception_is_an_internal_error_with_its_trace(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_guarded("prog", lambda: _raise(RuntimeError("boom"))) == 3
    err = capsys.readouterr().err.splitlines()
    assert err[0] == INTERNAL
    assert err[1].startswith("Traceback") and err[-1] == "RuntimeError: boom"


def test_a_closed_pipe_is_quiet_success(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_guarded("prog", lambda: _raise(BrokenPipeError())) == 0
    assert capsys.readouterr().err == ""


def test_the_result_and_system_exit_pass_through() -> None:
    assert run_guarded("prog", lambda: 1) == 1
    with pytest.raises(SystemExit):
        run_guarded("prog", lambda: _raise(SystemExit(2)))


def test_undecodable_names_print_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    name = os.fsdecode(b"caf\xe9.py")  # a Latin-1 name: a lone surrogate once decoded

    def work() -> int:
        sys.stdout.write(f"{name}:1: near-duplicate\n")
        raise CrystalError(f"{name}: cannot read")

    assert run_guarded("prog", work) == 2
    captured = capsys.readouterr()
    assert captured.out == "caf\\udce9.py:1: near-duplicate\n"
    assert captured.err == "prog: error: caf\\udce9.py: cannot read\n"


@pytest.mark.parametrize("module", [cli_main, clone_check], ids=["crystal-lsp", "crystal-clones"])
def test_every_console_script_uses_the_boundary(
    module: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = []
    monkeypatch.setattr(module, "run_guarded", lambda prog, work: calls.append(prog) or 0)
    assert module.main(["--version"]) == 0  # type: ignore[attr-defined]
    assert calls == [module.PROG]  # type: ignore[attr-defined]


def _python(code: str, **env: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )


def test_a_reader_that_stops_early_gets_no_error() -> None:
    """``crystal-lsp scan | head -1``: exit 0, nothing on stderr, also at interpreter exit."""
    child = _python(
        """
        import sys
        from crystal_lsp.errors import run_guarded

        def work():
            for i in range(200_000):
                print("finding", i)
            return 1

        sys.exit(run_guarded("prog", work))
        """
    )
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.readline() == b"finding 0\n"
    child.stdout.close()
    assert child.wait(timeout=60) == 0
    assert child.stderr.read() == b""


def test_strict_utf8_stdout_prints_undecodable_names(tmp_path: os.PathLike[str]) -> None:
    child = _python(
        """
        import os, sys
        from crystal_lsp.errors import run_guarded

        sys.exit(run_guarded("prog", lambda: print(os.fsdecode(b"caf\\xe9.py")) or 0))
        """,
        PYTHONIOENCODING="utf-8:strict",
        PYTHONUTF8="1",
    )
    out, err = child.communicate(timeout=60)
    assert (child.returncode, out, err) == (0, b"caf\\udce9.py\n", b"")


def test_install_command_names_this_interpreter_and_checkout() -> None:
    from crystal_lsp.errors import install_command

    command = install_command("mcp")
    assert command.startswith(f"{sys.executable} -m pip install ")
    # the test venv is an editable install of this checkout
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert command.endswith(f"-e '{checkout}[mcp]'") or command.endswith(f"'{checkout}[mcp]'")


def test_a_missing_extra_says_the_command_that_installs_it(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # as without the extra: the SDK is not there
    import importlib.util

    from crystal_lsp.errors import install_command

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a)
    )
    code = cli_main.main(["mcp", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith("crystal-lsp: error: crystal-lsp mcp needs the mcp extra (")
    assert err.rstrip().endswith(f"; install it with: {install_command('mcp')}")


def test_install_command_without_a_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    from crystal_lsp.errors import install_command

    class Wheel:
        def read_text(self, name: str) -> str:
            return '{"url": "https://example.org/crystal_lsp-0.1.0-py3-none-any.whl"}'

    monkeypatch.setattr(metadata, "distributions", lambda name: [Wheel()])
    monkeypatch.setattr(os.path, "isfile", lambda path: False)
    assert install_command("dask").endswith(
        "-m pip install '.[dask]' (in the crystal-lsp checkout)"
    )
