"""Pass order (issue 13 item 11, issue 14 item 2): no xDSL pass run after
`ad-reverse` can turn a bounds error into a silent out-of-bounds access.

`ad-reverse` leaves every access of a gradient checked and only tags each
reverse-sweep repeat of a forward access with its twin;
`ad-elide-shadow-checks` drops a repeat's check only while its twin's check
is in the IR, and pins the twins it relied on (`ad.keep`). So whatever
canonicalize, cse or dce do before or after it, an index out of bounds is
still an IndexError.

Checked here, for every lit input with `ad.autodiff`, the overrun
reproducer and Python kernels of the same class, with and without
`simplify`: each gradient is called with arguments that send an access out
of bounds (small arrays, large index arguments), inside guard zones; if
`ad-reverse` alone raises IndexError, so must `ad-reverse` followed by each
of canonicalize, cse, dce and their combinations, with
`ad-elide-shadow-checks` never, last, or before them, and nothing outside
the arrays may change. The table `OUT_OF_BOUNDS` names the gradients known
to go out of bounds, so that the test cannot pass by finding none.
"""

from __future__ import annotations

import glob
import math
import os
import re

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, Float64Type, IndexType, IntegerType, MemRefType
from xdsl.passes import PassPipeline

from adpasses.core.context import parse_module, shared_context
from adpasses.native.llvm_jit import compile_module
from isolate import INPUTS, run_tool

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIT = os.path.join(ROOT, "test", "lit")

# Appended after ad-reverse: each pass, and combinations in both orders.
SUFFIXES = ["canonicalize", "cse", "dce", "canonicalize,cse,dce", "dce,cse,canonicalize"]
ELIDE = "ad-elide-shadow-checks"


def pipelines(simplify: bool) -> list[str]:
    reverse = "ad-reverse" if simplify else "ad-reverse{simplify=false}"
    out = []
    for suffix in SUFFIXES:
        out += [f"{reverse},{suffix}", f"{reverse},{suffix},{ELIDE}", f"{reverse},{ELIDE},{suffix}"]
    return out


def _passes() -> dict:
    from xdsl.transforms import get_all_passes

    from adpasses.transforms.registry import AD_PASSES

    table = dict(get_all_passes())
    table.update(AD_PASSES)
    return table


PASSES = _passes()


def run_pipeline(text: str, name: str, spec: str):  # type: ignore[no-untyped-def]
    module = parse_module(text, name)
    PassPipeline.parse_spec(PASSES, spec).apply(shared_context(), module)
    return module


def gradient_names(module) -> list[str]:  # type: ignore[no-untyped-def]
    """The gradients to call with made-up arguments. The reverse half of a
    split request (`<name>_rev` beside `<name>_aug`) is left out: it takes
    the tape its forward half allocated and frees it, so a made-up tape (a
    numpy buffer) is a contract violation, not an input (the Python API's
    `adpasses.split` never hands one over; test_split_api.py)."""
    names = [op.sym_name.data for op in module.ops
             if isinstance(op, func.FuncOp) and op.body.blocks and "_grad_" in op.sym_name.data]
    return [n for n in names if not (n.endswith("_rev") and n[:-4] + "_aug" in names)]


# -- arguments that go out of bounds, inside guard zones ----------------------------------

SIZES = (1, 3)  # every dynamic dimension of every array: one call each
INDEX = 7       # every index / integer argument, and every integer array element
GUARD = 16      # elements on each side of every array


class Arguments:
    """Arguments for a function type: arrays (each the middle of a larger
    buffer filled with a sentinel), index and integer scalars, floats."""

    def __init__(self, function: func.FuncOp, size: int):
        self.buffers: list[tuple[np.ndarray, slice]] = []
        self.values: list[object] = []
        rng = np.random.default_rng(3)
        for t in function.function_type.inputs.data:
            if isinstance(t, MemRefType):
                shape = [size if s < 0 else s for s in t.get_shape()]
                count = math.prod(shape)
                dtype = _dtype(t.element_type)
                sentinel = _sentinel(dtype)
                big = np.full(count + 2 * GUARD, sentinel, dtype=dtype)
                inner = slice(GUARD, GUARD + count)
                big[inner] = INDEX if dtype.kind in "iub" else rng.uniform(0.5, 1.5, count)
                self.buffers.append((big, inner))
                self.values.append(big[inner].reshape(shape))
            elif isinstance(t, IntegerType) and t.width.data == 1:
                self.values.append(True)
            elif isinstance(t, (IndexType, IntegerType)):
                self.values.append(INDEX)
            else:
                self.values.append(0.75)

    def guards_intact(self) -> bool:
        for big, inner in self.buffers:
            sentinel = _sentinel(big.dtype)
            if (big[:inner.start] != sentinel).any() or (big[inner.stop:] != sentinel).any():
                return False
        return True


def _sentinel(dtype: np.dtype) -> object:
    return {"b": False, "i": 123, "u": 123}.get(dtype.kind, -12345.25)


def _dtype(t) -> np.dtype:  # type: ignore[no-untyped-def]
    if isinstance(t, Float64Type):
        return np.dtype(np.float64)
    if isinstance(t, Float32Type):
        return np.dtype(np.float32)
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    assert isinstance(t, IntegerType), t
    return np.dtype({1: np.bool_, 32: np.int32, 64: np.int64}[t.width.data])


def call(compiled, module, name: str, size: int) -> str:  # type: ignore[no-untyped-def]
    """'ok', 'IndexError', or another exception's name; asserts that the
    guard zones are intact."""
    function = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)
    args = Arguments(function, size)
    try:
        compiled[name](*args.values)
        outcome = "ok"
    except IndexError as err:
        assert "out of bounds" in str(err), err
        outcome = "IndexError"
    except (ValueError, ArithmeticError) as err:
        outcome = type(err).__name__
    assert args.guards_intact(), f"{name} (arrays of {size}) wrote outside its arrays"
    return outcome


def outcomes(text: str, name: str, spec: str) -> dict[tuple[str, int], str]:
    """The outcome of each gradient of the module after `spec`, per size."""
    module = run_pipeline(text, name, spec)
    compiled = compile_module(module)
    return {(g, size): call(compiled, module, g, size)
            for g in gradient_names(module) for size in SIZES}


# -- the inputs ----------------------------------------------------------------------------

def _read(path: str) -> str:
    # Some lit inputs are deliberately not text (diagnostics for binary input).
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def lit_inputs() -> list[str]:
    """Every lit input that asks for derivatives (error tests aside: their
    RUN lines all expect failure, or the one that differentiates does)."""
    found = []
    for path in sorted(glob.glob(os.path.join(LIT, "**", "*.mlir"), recursive=True)):
        text = _read(path)
        runs = re.findall(r"// RUN: (.*)", text)
        # The module itself (comments aside) must ask for derivatives: a file
        # of RUN lines over inputs elsewhere only names `ad.autodiff` in text.
        code = re.sub(r"//.*", "", text)
        # Inputs whose differentiation is itself expected to fail (a `not`
        # RUN line of --reverse / ad-reverse) have no gradients to call.
        reverse_fails = any(run.startswith("not ") and re.search(r"--reverse\b|ad-reverse", run)
                            for run in runs)
        # Diagnostic tests (`--verify-diagnostics`): their differentiation is
        # expected to fail with the annotated errors.
        reverse_fails = reverse_fails or any("--verify-diagnostics" in run for run in runs)
        # A module whose gradient is already built for a split request (its
        # ad.split_point marks where the forward sweep ends) is an input of
        # ad-split-sweeps, a later step: ad-reverse refuses to build it again.
        reverse_fails = reverse_fails or "ad.split_point" in code
        # A module with ad.fwddiff too needs ad-forward before it lowers
        # (test_safety_forward.py checks forward mode's pass order).
        if "ad.autodiff" not in code or "ad.fwddiff" in code or "/Inputs/" in path or not runs \
                or reverse_fails \
                or all(run.startswith("not ") for run in runs):
            continue
        found.append("lit/" + os.path.relpath(path, LIT))
    return found


SAFETY_INPUTS = ["safety/overrun.mlir", "safety/pass_order.mlir"]
CASES = lit_inputs() + SAFETY_INPUTS

# (gradient, array size) calls known to go out of bounds (`Arguments`).
# Every call that does, listed or not (a lit input added later), is checked
# after every pipeline.
OUT_OF_BOUNDS = {
    "lit/fuzz/fpowi_zero_exponent.mlir": {("f_grad_d_", 1)},
    "lit/fuzz/reload_from_branch_alloca.mlir": {("f_grad_c_", 1), ("f_grad_c_", 3)},
    "lit/fuzz/reload_from_branch_alloca_active.mlir": {("f_grad_d_", 1), ("f_grad_d_", 3)},
    "lit/reverse/dead_forward_checks.mlir": {("kept_grad_dc_a", 1), ("kept_grad_dc_a", 3)},
    "lit/reverse/shadow_checks.mlir": {("psum_grad_dc_a", 1), ("psum_grad_dc_a", 3)},
    "safety/overrun.mlir": {("overrun_grad_d_a", 1), ("overrun_grad_d_a", 3)},
    "safety/pass_order.mlir": {(g, size) for size in SIZES for g in (
        "square_n_grad_dc_a", "scale_n_grad_ddc_", "shifted_sum_grad_dc_a", "rows_n_grad_dc_a",
        "copy_n_grad_dc_a", "const_table_grad_dcc_a")} | {("third_grad_d_a", 1)},
}


def case_text(case: str) -> tuple[str, str]:
    kind, rel = case.split("/", 1)
    path = os.path.join(INPUTS if kind == "safety" else LIT, rel)
    return _read(path), path


@pytest.mark.parametrize("simplify", [False, True], ids=["no-simplify", "simplify"])
@pytest.mark.parametrize("case", CASES)
def test_bounds_errors_survive_any_pass_order(case, simplify):
    text, path = case_text(case)
    reverse = "ad-reverse" if simplify else "ad-reverse{simplify=false}"
    # Every check in place; then the normal pipeline (elision last) agrees.
    base = outcomes(text, path, reverse)
    assert outcomes(text, path, f"{reverse},{ELIDE}") == base
    found = {call for call, outcome in base.items() if outcome == "IndexError"}
    assert OUT_OF_BOUNDS.get(case, set()) <= found
    if not found:
        return
    for spec in pipelines(simplify):
        got = outcomes(text, path, spec)
        for g, size in found:
            assert got[g, size] == "IndexError", f"{case}: {spec}: {g} on arrays of {size}: {got[g, size]}"


# -- the reproducer, through the tools -------------------------------------------------------

CLI_SUFFIXES = ["canonicalize", "cse", "dce", "canonicalize,cse,dce"]


@pytest.mark.parametrize("placement", ["never", "last", "first"])
@pytest.mark.parametrize("reverse", ["ad-reverse{simplify=false}", "ad-reverse"])
@pytest.mark.parametrize("suffix", CLI_SUFFIXES)
def test_overrun_reproducer_through_ad_opt(suffix, reverse, placement):
    """../shared/repros/mlir/overrun*: `ad-opt -p 'ad-reverse{simplify=false},canonicalize'`
    used to write one element past the 5-element shadow (100 -> 102)."""
    spec = {"never": f"{reverse},{suffix}", "last": f"{reverse},{suffix},{ELIDE}",
            "first": f"{reverse},{ELIDE},{suffix}"}[placement]
    out = run_tool("ad-opt", "-p", spec, os.path.join(INPUTS, "overrun.mlir"))
    assert out.returncode == 0, out
    grad = compile_module(out.stdout)["overrun_grad_d_a"]
    big, bigd = np.arange(8, dtype=np.float64), np.zeros(8)
    bigd[5] = 100.0
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 5"):
        grad(big[:5], bigd[:5], 1.0)
    assert bigd[5] == 100.0, "the gradient wrote past its shadow"
    # In bounds (6 elements), the gradient is right: d/dx of (x1-x0)^2 + ... .
    x = np.array([0.5, 2.0, -1.0, 3.0, 0.25, 1.5])
    dx = np.zeros(6)
    grad(x, dx, 1.0)
    d = x[1::2] - x[0::2]
    expected = np.zeros(6)
    expected[1::2], expected[0::2] = 2 * d, -2 * d
    np.testing.assert_allclose(dx, expected)


@pytest.mark.parametrize("suffix", [None, *CLI_SUFFIXES])
def test_overrun_program_under_ad_run(suffix, tmp_path):
    """The same as a program: ad-run stops with one IndexError line (exit 1)
    instead of printing the overwritten neighbour."""
    program = os.path.join(INPUTS, "overrun_run.mlir")
    if suffix is not None:
        out = run_tool("ad-opt", "-p", f"ad-reverse{{simplify=false}},{suffix}", program)
        assert out.returncode == 0, out
        program = str(tmp_path / "reversed.mlir")
        with open(program, "w") as f:
            f.write(out.stdout)
    run = run_tool("ad-run", program)
    assert run.returncode == 1, run
    assert "d[5]" not in run.stdout, run
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "IndexError: index 5 is out of bounds for axis 0 with size 5 (at "), run


def test_ad_opt_reverse_runs_the_elision_last():
    """`ad-opt --reverse` = ad-reverse, then ad-elide-shadow-checks: the
    reverse loop of the reproducer is unchecked (its twins, the endpoint
    checks of the dead forward loads, are there and pinned). Reversed after
    the forward loop (--no-loop-local): the dead forward loop is the case."""
    out = run_tool("ad-opt", "--reverse", "--no-loop-local", os.path.join(INPUTS, "overrun.mlir"))
    assert out.returncode == 0, out
    loop = out.stdout[out.stdout.index("scf.for", out.stdout.index("@overrun_grad_d_a")):]
    accesses = [line for line in loop.splitlines() if "memref.load" in line or "memref.store" in line]
    assert len(accesses) == 6 and all("ad.unchecked" in line and "ad.twin_of" in line for line in accesses)
    assert out.stdout.count("ad.twin_end") == 4 and out.stdout.count("ad.keep") == 2
