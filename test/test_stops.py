"""One mechanism for every stop of compiled code (docs/lowering.md, "Stops"):
the lowerings stop only through `FunctionTranslator.stop_if` (its one
`__adpasses_oob` call), `adpasses.core.stop_codes.exception` decodes every
code, and a call whose callee stopped leaves too, with `boundscheck=False`
as well for the stops that option keeps (ad.broadcast, ad.size_match,
ad.raise_if, cf.assert).

The expected messages here are written out by hand: they are what users
see today (the end-to-end tests in test/safety/ and test/lit/ check the
same texts from real stops)."""

from __future__ import annotations

import ast
import pathlib
import struct

import numpy as np
import pytest

from adpasses.core import stop_codes
from adpasses.core.context import parse_module
from adpasses.native.llvm_jit import compile_module

ROOT = pathlib.Path(__file__).resolve().parents[1] / "adpasses"


def _calls(path: pathlib.Path, name: str) -> list[int]:
    """Lines of `path` that call a method or function named `name`."""
    tree = ast.parse(path.read_text())
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and ((isinstance(node.func, ast.Attribute) and node.func.attr == name)
                 or (isinstance(node.func, ast.Name) and node.func.id == name))]


def test_only_stop_if_records_a_stop() -> None:
    """No lowering calls the unconditional stop (`fail`) but `stop_if`
    itself and the parallel loop re-recording a worker's stop; only
    core.py (which calls it) and thread_state.py (which defines it) name
    `__adpasses_oob`, only thread_state.py and the runtime's symbol list
    `adpasses_record_stop`. A new check must use `stop_if`."""
    fails = {p.name: _calls(p, "fail") for p in sorted((ROOT / "lowering").glob("*.py"))}
    assert {name for name, lines in fails.items() if lines} == {"core.py", "parallel.py"}
    assert len(fails["core.py"]) == 1 and len(fails["parallel.py"]) == 1
    for symbol, owners in (("__adpasses_oob", {"core.py", "thread_state.py"}),
                           ("adpasses_record_stop", {"thread_state.py", "runtime.py"})):
        users = {path.name for path in ROOT.rglob("*.py") if any(
            isinstance(node, ast.Constant) and node.value == symbol for node in ast.walk(ast.parse(path.read_text())))}
        assert users == owners, symbol


def _f64_bits(x: float) -> int:
    return struct.unpack("<q", struct.pack("<d", x))[0]


SITE = "k.py:3:9"
CASES = [
    # (code, site text, index, size) -> (class, message)
    ((2, SITE, 7, 5), (IndexError, "index 7 is out of bounds for axis 2 with size 5 (at k.py:3:9); "
                                   "valid indices are 0 to 4")),
    ((0, SITE, -1, 0), (IndexError, "index -1 is out of bounds for axis 0 with size 0 (at k.py:3:9); "
                                    "axis 0 is empty: no index is valid")),
    # a Python index -6 of 5 elements, wrapped to -1 by the frontend
    ((stop_codes.PY_INDEX_AXIS + 1, SITE, -1, 5),
     (IndexError, "index -6 is out of bounds for axis 1 with size 5 (at k.py:3:9); valid indices are -5 to 4")),
    ((stop_codes.ZERO_DIVISION, SITE, 0, 0), (ZeroDivisionError, "integer division or modulo by zero (at k.py:3:9)")),
    ((stop_codes.SHADOW_AXIS - 1, stop_codes.argument_site_text(
        "shadow %dx (argument 1) has size {index} in dimension {dim}, but its primal %x (argument 0) has "
        "size {size}: a shadow must have exactly its primal's shape", "f_grad", SITE), 3, 4),
     (ValueError, "f(): shadow %dx (argument 1) has size 3 in dimension 1, but its primal %x (argument 0) "
                  "has size 4: a shadow must have exactly its primal's shape (in @f_grad, at k.py:3:9)")),
    ((stop_codes.SHADOW_AXIS, stop_codes.argument_site_text(
        "a @ b: dimension 1 of %a has size {index}, but dimension 0 of %b has size {size}; they must be equal",
        "g", None), 2, 6),
     (ValueError, "f(): a @ b: dimension 1 of %a has size 2, but dimension 0 of %b has size 6; they must be "
                  "equal (in @g)")),
    ((stop_codes.NEGATIVE_SIZE, SITE, -5, 0),
     (ValueError, "negative dimensions are not allowed: an allocation was asked for size -5 in dimension 0 "
                  "(at k.py:3:9)")),
    ((stop_codes.SIZE_OVERFLOW, SITE, -1, stop_codes.describe_allocation(stop_codes.TAPE, 8)),
     (MemoryError, "cannot allocate the tape of a loop (values the reverse sweep reads back): more than 2**64 "
                   "elements of 8 bytes need more than 2**63 - 1 bytes, more than any address space holds "
                   "(at k.py:3:9)")),
    ((stop_codes.ALLOCATION_FAILED, SITE, 3 << 30, stop_codes.describe_allocation(stop_codes.ALLOCATION, 8)),
     (MemoryError, "unable to allocate 3.00 GiB (402653184 elements of 8 bytes) for an array: out of memory "
                   "(at k.py:3:9)")),
    ((stop_codes.STACK_LIMIT, SITE, 1 << 21, 1 << 20),
     (MemoryError, "a stack allocation (memref.alloca) of 2.00 MiB would exceed the limit of 1.00 MiB of stack "
                   "memory per call; use memref.alloc for large or data-dependent sizes (at k.py:3:9)")),
    ((stop_codes.FLOAT_TO_INT, SITE, _f64_bits(float("nan")), 64),
     (ValueError, "cannot convert float NaN to integer (at k.py:3:9)")),
    ((stop_codes.FLOAT_TO_INT, SITE, _f64_bits(float("-inf")), 32),
     (OverflowError, "cannot convert float infinity to integer (at k.py:3:9)")),
    ((stop_codes.FLOAT_TO_INT, SITE, _f64_bits(70000.5), -16),
     (OverflowError, "int(70000.5) does not fit in an unsigned 16-bit integer (compiled code has no big "
                     "integers) (at k.py:3:9)")),
    ((stop_codes.LOOP_STEP, SITE, -2, 0),
     (ValueError, "scf.for step must be positive, got -2 (a loop with this step would never end) (at k.py:3:9)")),
    ((stop_codes.RAISED, stop_codes.raise_site_text("KeyError", "no {0} in {1:shape2} {{x}}", SITE),
      4, (2 << 32) | 3),
     (KeyError, "'no 4 in (2,3) {x} (at k.py:3:9)'")),
    ((stop_codes.RAISED, stop_codes.raise_site_text("NotABuiltinError", "custom", None), 0, 0),
     (RuntimeError, "custom (at ?)")),
]


@pytest.mark.parametrize("args, expected", CASES, ids=[str(k) for k in range(len(CASES))])
def test_every_code_decodes_to_its_exception(args: tuple, expected: tuple) -> None:
    code, where, index, size = args
    err = stop_codes.exception(code, where, index, size, "f")
    assert type(err) is expected[0]
    assert str(err) == expected[1]
    # Stops located by their site carry location and detail for ad-run's
    # `file:line:col: error:` line; index, zero-division and argument errors
    # say where in their message only.
    located = code in stop_codes.CODES
    assert hasattr(err, "location") == located
    if located:
        assert err.location in (SITE, "?")  # type: ignore[attr-defined]
        assert err.detail in str(err)  # type: ignore[attr-defined]


def test_an_unknown_code_is_an_internal_error_not_a_made_up_message() -> None:
    with pytest.raises(ValueError, match="unknown stop code"):
        stop_codes.exception(stop_codes.RAISED - 100, SITE, 0, 0, "f")


CALLEE = """func.func @g(%a: memref<?x?xf64>, %b: memref<?x?xf64>, %n: index, %m: index) -> index {
  STOP
  func.return %n : index
}
func.func @f(%x: memref<?xf64>, %a: memref<?x?xf64>, %b: memref<?x?xf64>, %n: index, %m: index) -> index {
  %s = func.call @g(%a, %b, %n, %m) : (memref<?x?xf64>, memref<?x?xf64>, index, index) -> index
  %c0 = arith.constant 0 : index
  %one = arith.constant 1.0 : f64
  memref.store %one, %x[%c0] : memref<?xf64>
  func.return %s : index
}
"""

STOPS = {
    "broadcast": ("%s2 = ad.broadcast %n, %m", ValueError,
                  "operands could not be broadcast together: a dimension of size 3 meets one of size 4 "
                  "(sizes must be equal, or one of them 1) (at callee.mlir:2:3)"),
    "size_match": ('ad.size_match %a[1], %b[0] "a @ b" : memref<?x?xf64>, memref<?x?xf64>', ValueError,
                   "f(): a @ b: dimension 1 of %a (argument 0) has size 3, but dimension 0 of %b (argument 1) "
                   "has size 4; they must be equal (in @g, at callee.mlir:2:3)"),
    "raise_if": ('%bad = arith.cmpi ne, %n, %m : index\n  ad.raise_if %bad, %n, %m {exception = "KeyError", '
                 'message = "{0} != {1}"}', KeyError, "'3 != 4 (at callee.mlir:3:3)'"),
}


@pytest.mark.parametrize("boundscheck", [True, False])
@pytest.mark.parametrize("kind", sorted(STOPS))
def test_a_caller_leaves_when_its_callee_stopped(kind: str, boundscheck: bool) -> None:
    """@f calls @g, which stops, then stores into x: the store must not
    happen (the call ended at the stop), with and without bounds checks.
    Without them, the callers of a function whose only stop was an
    ad.broadcast or ad.size_match did not test the error slot and went on
    (x[0] became 1.0)."""
    line, kind_error, message = STOPS[kind]
    module = parse_module(CALLEE.replace("STOP", line), "callee.mlir")
    f = compile_module(module, boundscheck=boundscheck)["f"]
    x = np.zeros(1)
    a, b = np.zeros((2, 3)), np.zeros((4, 2))
    with pytest.raises(kind_error) as err:
        f(x, a, b, 3, 4)
    assert str(err.value) == message
    assert x[0] == 0.0
    assert f(x, np.zeros((2, 4)), b, 4, 4) == 4 and x[0] == 1.0
