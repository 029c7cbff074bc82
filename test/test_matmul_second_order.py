"""Second order and forward mode through matrix products (issues 15, 16):
`hessian`, `hvp`, `jacfwd` and `jvp` of functions that combine `@`,
`np.dot` and `np.matmul` (matrix-matrix, matrix-vector, vector-matrix,
vector-vector, a BLAS-sized product) with elementwise `tanh`/`exp` and
reductions, with respect to each argument, on random inputs:

- first derivatives (`jacfwd`, `jvp`) against central finite differences
  of the same function run by numpy;
- Hessians and Hessian-vector products against central finite differences
  of the gradient (itself checked against finite differences of numpy's
  function in the same test).

And what made the Hessian of `sum(tanh(a @ x @ x))` never finish
compiling, checked on the IR itself: every stop (a failed bounds or size
check) used to free the arrays live at it inline, so the tangent function
carried one call to free per stop and live array (33,582 of its 55,834
lines of LLVM IR), and the loop nests of its 84 matrix products each
carried bounds checks that LLVM's O3 loop unswitching cloned the nests
over. The test that it compiles runs in a subprocess with a timeout, so
that a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import adpasses
from finite_diff import assert_matches, finite_differences


def chain_tanh(a, x):
    """The function of the report: two chained products."""
    return np.sum(np.tanh(a @ x @ x))


def dot_exp(a, b):
    """np.dot of two matrices, exp, a reduction."""
    return np.sum(np.exp(0.5 * np.dot(a, b)))


def matmul_matrix_vector(a, v):
    t = np.tanh(np.matmul(a, v))
    return np.sum(t * t)


def vector_matrix(v, a):
    y = v @ a
    return np.sum(np.exp(0.3 * y) * np.tanh(y))


def vector_vector(u, v):
    """Two dot products of vectors (numbers) inside elementwise functions."""
    return np.tanh(u @ v) + np.exp(0.1 * np.dot(u, u))


def gram_product(a, x):
    """x appears on both sides of a product and in the elementwise part."""
    g = x.T @ (a @ x)
    return np.sum(np.tanh(g)) + np.sum(np.exp(0.2 * x))


RNG = np.random.default_rng(1516)

# (function, shapes of its arguments)
CASES = [
    (chain_tanh, ((3, 3), (3, 3))),
    (dot_exp, ((3, 4), (4, 2))),
    (dot_exp, ((8, 9), (9, 8))),  # m * n * k = 576: the BLAS path, and its tangents
    (matmul_matrix_vector, ((3, 4), (4,))),
    (vector_matrix, ((3,), (3, 5))),
    (vector_vector, ((4,), (4,))),
    (gram_product, ((3, 3), (3, 2))),
]
IDS = [f"{f.__name__}{'x'.join(str(s) for s in shapes)}" for f, shapes in CASES]


def _inputs(shapes):
    return tuple(RNG.uniform(-1, 1, s) for s in shapes)


def _jit(f):
    return adpasses.jit(f)


def _checked_gradient(f, jf, args, k):
    """adpasses' gradient w.r.t. argument k at args, checked against finite
    differences of numpy's f."""
    g = adpasses.grad(jf, k)(*args)
    assert_matches(g, finite_differences(f, list(args), [k])[0], what=f"grad {f.__name__} arg {k}")
    return g


def _hessian_by_differences(jf, args, a, b):
    """d/d args[b] of the gradient w.r.t. args[a]: shape args[a].shape +
    args[b].shape, by central differences of adpasses' gradient."""
    grad = adpasses.grad(jf, a)
    x = args[b]
    out = np.zeros(args[a].shape + x.shape)
    for idx in np.ndindex(x.shape):
        h = 1e-5 * max(1.0, abs(float(x[idx])))
        plus = [v.copy() for v in args]
        minus = [v.copy() for v in args]
        plus[b][idx] += h
        minus[b][idx] -= h
        out[(...,) + idx] = (grad(*plus) - grad(*minus)) / (2 * h)
    return out


def _assert_close(got, expected, what):
    scale = max(1.0, float(np.max(np.abs(expected))))
    err = float(np.max(np.abs(got - expected)))
    assert got.shape == expected.shape, f"{what}: shape {got.shape}, expected {expected.shape}"
    assert np.all(np.isfinite(got)) and err <= 1e-6 * scale, (
        f"{what}: differs from finite differences of the gradient by {err:.3e}\n"
        f"got = {got}\nexpected = {expected}")


@pytest.mark.parametrize("f, shapes", CASES, ids=IDS)
def test_hessian_matches_finite_differences_of_the_gradient(f, shapes):
    jf = _jit(f)
    args = _inputs(shapes)
    kept = [a.copy() for a in args]
    for k in range(len(args)):
        _checked_gradient(f, jf, args, k)
        H = adpasses.hessian(jf, k)(*args)
        _assert_close(H, _hessian_by_differences(jf, args, k, k), f"hessian({f.__name__}, {k})")
    for a, b in zip(args, kept):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("f, shapes", [CASES[0], CASES[3], CASES[6]], ids=[IDS[0], IDS[3], IDS[6]])
def test_hessian_blocks_of_both_arguments(f, shapes):
    """hessian(f, (0, 1)): the mixed blocks too (the tangent of the
    gradient w.r.t. one argument along the other)."""
    jf = _jit(f)
    args = _inputs(shapes)
    H = adpasses.hessian(jf, (0, 1))(*args)
    for a in (0, 1):
        for b in (0, 1):
            _assert_close(H[a][b], _hessian_by_differences(jf, args, a, b),
                          f"hessian({f.__name__}, (0, 1))[{a}][{b}]")


@pytest.mark.parametrize("f, shapes", CASES, ids=IDS)
def test_hvp_matches_finite_differences_of_the_gradient(f, shapes):
    jf = _jit(f)
    args = _inputs(shapes)
    for k in range(len(args)):
        v = RNG.uniform(-1, 1, args[k].shape)
        got = adpasses.hvp(jf, k)(*args, v)
        grad = adpasses.grad(jf, k)
        h = 1e-5
        plus = [a.copy() for a in args]
        minus = [a.copy() for a in args]
        plus[k] += h * v
        minus[k] -= h * v
        _assert_close(np.asarray(got), (grad(*plus) - grad(*minus)) / (2 * h), f"hvp({f.__name__}, {k})")


@pytest.mark.parametrize("f, shapes", CASES, ids=IDS)
def test_jacfwd_and_jvp_match_finite_differences(f, shapes):
    jf = _jit(f)
    args = _inputs(shapes)
    value = f(*args)
    for k in range(len(args)):
        expected = finite_differences(f, list(args), [k])[0]
        assert_matches(adpasses.jacfwd(jf, k)(*args), expected, what=f"jacfwd({f.__name__}, {k})")
        t = RNG.uniform(-1, 1, args[k].shape)
        tangents = tuple(t if j == k else None for j in range(len(args)))
        got_value, got_tangent = adpasses.jvp(jf, args, tangents)
        assert abs(got_value - value) <= 1e-12 * max(1.0, abs(value))
        assert_matches(got_tangent, float(np.sum(expected * t)), what=f"jvp({f.__name__}, {k})")


# -- what the compiler makes of the Hessian of sum(tanh(a @ x @ x)) ---------------------------


def _hessian_llvm_ir(width=None):
    """(MLIR of the Hessian's module, its LLVM IR before optimisation, the
    tangent function's name) for chain_tanh w.r.t. x on 3x3 arrays."""
    from adpasses.api.forward import hessian_module
    from adpasses.lowering import emit_llvm_ir

    jf = _jit(chain_tanh)
    a, x = _inputs(((3, 3), (3, 3)))
    module, entry, *_ = hessian_module(jf, (a, x), (1,), width or 9)
    return str(module), emit_llvm_ir(module), entry.removesuffix("_sweeps")


def _function(ir, name):
    start = ir.index(f'define void @"u.{name}"(')
    return ir[start:ir.index("\n}\n", start)]


def test_stops_share_their_cleanup_in_the_hessian():
    """A stop frees the arrays live at it through shared cleanup blocks:
    the tangent function has at most one call to free per allocation it
    makes (it had 33,582: one per stop and live array)."""
    mlir, ir, name = _hessian_llvm_ir()
    body = _function(ir, name)
    allocations = mlir.count("memref.alloc(")
    stops = body.count('call void @"__adpasses_oob"')
    # The cleanup blocks (one free each): at most one per allocation here
    # (the live sets of the function are prefixes of one another).
    cleanups = sum(1 for line in body.splitlines() if line.startswith("free_on_stop"))
    assert stops > 100 and allocations > 20  # the case this is about: many stops, many arrays
    assert 0 < cleanups <= allocations, f"{cleanups} frees on stop paths for {allocations} allocations"
    assert body.count('call void @"free"') <= cleanups + mlir.count("memref.dealloc")
    # Every stop leaves through one exit.
    assert body.count("\n  ret void") <= 2


def test_matmul_loop_nests_lowered_for_llvm_have_no_bounds_checks():
    """The loop nests of the products (84 in the Hessian) are unchecked:
    their size matches bound every index, so the nests have no exits for
    LLVM to unswitch over; and the largest function is small enough for O3
    (`OPT_LEVEL_LIMITS`: it was 55,834 lines)."""
    from adpasses.native.llvm_jit import OPT_LEVEL_LIMITS, affordable_level, largest_function_lines

    from adpasses.api.forward import hessian_module
    from adpasses.transforms.expand_upstream_ops import without_upstream_only_ops

    mlir, ir, name = _hessian_llvm_ir()
    products = mlir.count("linalg.matmul")
    assert products >= 80
    a, x = _inputs(((3, 3), (3, 3)))
    lowered = str(without_upstream_only_ops(hessian_module(_jit(chain_tanh), (a, x), (1,), 9)[0]))
    assert "linalg.matmul ins" not in lowered
    # Each nest: three loads and a store, all unchecked.
    unchecked = sum(1 for line in lowered.splitlines()
                    if ("memref.load" in line or "memref.store" in line) and "ad.unchecked" in line)
    assert unchecked >= 4 * products
    # The same module with the nests checked, for comparison: each nest
    # had at least its four accesses' stops.
    from adpasses.lowering import emit_llvm_ir
    from adpasses.transforms.expand_upstream_ops import expand_upstream_ops
    from adpasses.transforms.lower_linalg import lower_linalg
    from adpasses.transforms.lower_matmul import lower_matmuls

    checked = hessian_module(_jit(chain_tanh), (a, x), (1,), 9)[0]
    lower_linalg(checked)
    lower_matmuls(checked, unchecked=False)
    expand_upstream_ops(checked)
    before = _function(emit_llvm_ir(checked), name).count('call void @"__adpasses_oob"')
    stops = _function(ir, name).count('call void @"__adpasses_oob"')
    assert stops <= before - 4 * products, f"{stops} stops, {before} with the nests checked"
    assert largest_function_lines(ir) <= dict(OPT_LEVEL_LIMITS)[3]
    assert affordable_level(ir, 3) == (3, "")


def test_the_hessian_of_chained_products_compiles_in_bounded_time(tmp_path):
    """In a fresh process (no compiled module cached), with a timeout generous for a loaded two-core machine: before the
    fix LLVM did not finish (over 150 s idle). The child checks the Hessian
    against finite differences of the gradient and reports the level LLVM
    used."""
    script = tmp_path / "hess.py"
    script.write_text(
        "import numpy as np, adpasses\n"
        "from adpasses.native import llvm_jit\n"
        "@adpasses.jit\n"
        "def f(a, x):\n"
        "    return np.sum(np.tanh(a @ x @ x))\n"
        "rng = np.random.default_rng(0)\n"
        "a, x = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, (3, 3))\n"
        "H = adpasses.hessian(f, 1)(a, x)\n"
        "g = adpasses.grad(f, 1)\n"
        "ref = np.zeros((3, 3, 3, 3))\n"
        "for i in np.ndindex(3, 3):\n"
        "    p, m = x.copy(), x.copy(); p[i] += 1e-5; m[i] -= 1e-5\n"
        "    ref[(...,) + i] = (g(a, p) - g(a, m)) / 2e-5\n"
        "assert np.max(np.abs(H - ref)) < 1e-6 * max(1.0, np.max(np.abs(ref))), np.max(np.abs(H - ref))\n"
        "print('ok')\n")
    env = dict(os.environ, ADPASSES_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]
    assert "optimised at O" not in run.stderr  # O3: no cheaper pipeline was needed
