"""`ad-run`: compile a module, run its zero-argument entry function, and
report every failure as one line with exit status 1 (in-process through
`main`, so these tests cost no interpreter start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adpasses.transforms import registry as passes
from adpasses.tools import ad_run

PROGRAM = """func.func private @twice(%a: f64) -> f64 {
  %r = arith.addf %a, %a : f64
  func.return %r : f64
}
func.func @main() {
  %x = arith.constant 1.25 : f64
  %n = arith.constant 3 : index
  %y = func.call @twice(%x) : (f64) -> f64
  printf.print_format "y = {} n = {}\\n", %y : f64, %n : index
  func.return
}
func.func @takes(%a: f64) {
  func.return
}
func.func @oob() {
  %c3 = arith.constant 3 : index
  %m = memref.alloca() : memref<3xf64>
  %v = memref.load %m[%c3] : memref<3xf64>
  func.return
}
"""

AUTODIFF = """func.func @sq(%a: f64) -> f64 {
  %r = arith.mulf %a, %a : f64
  func.return %r : f64
}
func.func @main() {
  %x = arith.constant 3.0 : f64
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @sq(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "d = {}\\n", %d : f64
  func.return
}
"""


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "prog.mlir"
    path.write_text(PROGRAM)
    return path


def run(capfd, *argv: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    status = ad_run.main(list(argv))
    out, err = capfd.readouterr()
    return status, out, err


def test_runs_the_entry_and_prints(capfd, program):
    assert run(capfd, str(program)) == (0, "y = 2.5 n = 3\n", "")


def test_missing_entry_and_entry_with_arguments(capfd, program):
    status, _, err = run(capfd, str(program), "--entry", "nope")
    assert status == 1 and "no function '@nope'" in err and "--entry" in err
    status, _, err = run(capfd, str(program), "--entry", "takes")
    assert status == 1 and f"{program}:12:1: error:" in err and "takes arguments" in err


def test_out_of_bounds_at_run_time(capfd, program):
    status, _, err = run(capfd, str(program), "--entry", "oob")
    assert status == 1
    assert err.strip() == f"IndexError: index 3 is out of bounds for axis 0 with size 3 (at {program}:18:3); valid indices are 0 to 2"
    status, _, err = run(capfd, str(program), "--entry", "oob", "--no-boundscheck")
    assert status == 0 and err == ""


def test_syntax_error_is_one_line(capfd, tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text("func.func @main() {\n  %x = arith.addf : f64\n}\n")
    status, _, err = run(capfd, str(path))
    assert status == 1 and err.startswith(f"{path}:2:") and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_autodiff_runs_the_reverse_pass_first(capfd, tmp_path):
    path = tmp_path / "grad.mlir"
    path.write_text(AUTODIFF)
    assert run(capfd, str(path)) == (0, "d = 6\n", "")


def test_a_reverse_pass_that_cannot_load_is_a_clear_error(capfd, tmp_path, monkeypatch):
    def broken():  # type: ignore[no-untyped-def]
        raise ImportError("cannot import name 'ReversePass'")

    monkeypatch.setitem(passes.AD_PASSES, "ad-reverse", broken)
    path = tmp_path / "grad.mlir"
    path.write_text(AUTODIFF)
    status, _, err = run(capfd, str(path))
    assert status == 1 and len(err.strip().splitlines()) == 1
    assert f"{path}:8:3: error: the module contains 'ad.autodiff', but the reverse pass" in err
    assert "ImportError: cannot import name 'ReversePass'" in err
