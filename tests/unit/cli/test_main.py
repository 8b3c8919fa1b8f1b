"""The entry point: ``--version``, ``python -m crystal_lsp`` and the error boundary."""

from __future__ import annotations

import subprocess
import sys

import pytest

from crystal_lsp import CrystalError, __version__
from crystal_lsp.cli import score as score_module
from crystal_lsp.cli.main import main
from crystal_lsp.metric.ngrams import native_status


def test_version_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == f"crystal-lsp {__version__} (core: {native_status()})"


def test_python_dash_m_version() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "crystal_lsp", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout.strip().startswith(f"crystal-lsp {__version__} (core: ")


def test_a_command_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    assert "required" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("exc", "code", "first_line"),
    [
        pytest.param(CrystalError("bad input"), 2, "crystal-lsp: error: bad input", id="crystal-error"),
        pytest.param(CrystalError("found", exit_code=1), 1, "crystal-lsp: error: found", id="exit-code"),
        pytest.param(RuntimeError("boom"), 3, "crystal-lsp: internal error", id="internal"),
        pytest.param(KeyboardInterrupt(), 130, "crystal-lsp: interrupted", id="interrupt"),
    ],
)  # fmt: skip
def test_error_boundary(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    exc: BaseException,
    code: int,
    first_line: str,
) -> None:
    def fail(args: object) -> int:
        raise exc

    monkeypatch.setattr(score_module, "run", fail)
    assert main(["score", "--example"]) == code
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith(first_line)
    if code == 3:
        assert "Traceback" in err and "RuntimeError: boom" in err
    else:
        assert len(err.splitlines()) == 1


@pytest.mark.parametrize("command", ["scan", "mcp", "sset build", "disting"])
@pytest.mark.parametrize("jobs", ["0", "99999"])
def test_every_jobs_option_has_one_range(
    command: str, jobs: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as info:
        main([*command.split(), "--jobs", jobs, "."])
    assert info.value.code == 2
    assert f"argument --jobs: must be in 1..1024, not {jobs}" in capsys.readouterr().err
