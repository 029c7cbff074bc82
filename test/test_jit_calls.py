"""The Python calling convention of compiled modules (adpasses.native.pyentry and
the ctypes fallback adpasses.native.ctypes_entry): both bindings accept the same
arguments and raise the same errors; strided views are passed without
copies; `.raw`, `.address` and the module cache; allocation counters."""

from __future__ import annotations

import ctypes
import inspect
import re
import time

import numpy as np
import pytest

from adpasses.native import llvm_jit

from adpasses.native import runtime
from adpasses.native.llvm_jit import compile_module
from adpasses.native.pyentry import FAST_PATH, numpy_layout_ok

S2 = "memref<?x?xf64, strided<[?, ?], offset: ?>>"

TEXT = f"""
func.func @mix(%x: memref<?xf64>, %y: memref<4xf64>, %n: index, %s: f64, %flag: i1, %k: i32) -> (f64, index, i1, i32) {{
  %c0 = arith.constant 0 : index
  %a = memref.load %x[%n] : memref<?xf64>
  %b = arith.mulf %a, %s : f64
  memref.store %b, %y[%c0] : memref<4xf64>
  func.return %b, %n, %flag, %k : f64, index, i1, i32
}}
func.func @scale_view(%A: {S2}, %s: f64) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %A, %c0 : {S2}
  %n = memref.dim %A, %c1 : {S2}
  scf.for %i = %c0 to %m step %c1 {{
    scf.for %j = %c0 to %n step %c1 {{
      %v = memref.load %A[%i, %j] : {S2}
      %w = arith.mulf %v, %s : f64
      memref.store %w, %A[%i, %j] : {S2}
    }}
  }}
  func.return
}}
func.func @count(%b: memref<?xi1>, %v: memref<?xi32>) -> (index, i32) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0 : i32
  %n = memref.dim %b, %c0 : memref<?xi1>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0, %sum = %z) -> (index, i32) {{
    %t = memref.load %b[%i] : memref<?xi1>
    %x = memref.load %v[%i] : memref<?xi32>
    %one = arith.select %t, %c1, %c0 : index
    %a = arith.addi %acc, %one : index
    %s = arith.addi %sum, %x : i32
    scf.yield %a, %s : index, i32
  }}
  func.return %r#0, %r#1 : index, i32
}}
func.func @nothing() {{
  func.return
}}
"""

BINDINGS = ["shim", "ctypes"] if FAST_PATH else ["ctypes"]


@pytest.fixture(scope="module", params=BINDINGS)
def mod(request):
    return compile_module(TEXT, binding=request.param)


def good_args():
    return [np.arange(5.0), np.zeros(4), 2, 1.5, True, 7]


def test_results_of_every_kind(mod):
    args = good_args()
    assert mod.mix(*args) == (3.0, 2, True, 7)
    assert args[1][0] == 3.0
    assert mod.nothing() is None
    flags = np.array([True, False, True, True])
    assert mod["count"](flags, np.arange(4, dtype=np.int32)) == (3, 6)


def test_numpy_scalars_are_accepted(mod):
    args = good_args()
    args[2:] = [np.int64(1), np.float32(2.0), np.bool_(False), np.int32(3)]
    assert mod.mix(*args) == (2.0, 1, False, 3)


def test_strided_views_are_passed_without_copies(mod):
    A = np.arange(24.0).reshape(4, 6)
    expected = A.copy()
    views = [lambda M: M.T, lambda M: M[::-1, 1::2], lambda M: M[1:3, ::-3], lambda M: M[:0]]
    for view in views:
        mod.scale_view(view(A), 2.0)  # writes through the view into A
        view(expected)[...] *= 2.0
    np.testing.assert_array_equal(A, expected)


ERRORS = [
    (lambda a: a[:5], TypeError, r"mix\(\) takes 6 positional arguments but 5 were given \(x, y, n, s, flag, k\)"),
    (lambda a: a + [1], TypeError, r"mix\(\) takes 6 positional arguments but 7 were given"),
    (lambda a: [list(a[0])] + a[1:], TypeError, r"argument 0 \('x'\) must be a numpy array of memref<\?xf64>, got list"),
    (lambda a: [a[0].astype(np.float32)] + a[1:], TypeError, r"argument 0 \('x'\) must have dtype float64, got float32"),
    (lambda a: [a[0].astype(">f8")] + a[1:], TypeError, r"got >f8 \(non-native byte order"),
    (lambda a: [a[0].reshape(5, 1)] + a[1:], ValueError, r"argument 0 \('x'\) has rank 2, expected 1"),
    (lambda a: [a[0], np.zeros(5)] + a[2:], ValueError, r"argument 1 \('y'\) has shape \(5,\), expected \(4,\)"),
    (lambda a: [np.arange(10.0)[::2]] + a[1:], ValueError,
     r"argument 0 \('x'\) is not C-contiguous.*np\.ascontiguousarray\(\.\.\.\).*strided layout"),
    (lambda a: [np.frombuffer(bytearray(48), np.uint8)[1:41].view(np.float64)] + a[1:], ValueError,
     r"argument 0 \('x'\) is not aligned"),
    (lambda a: a[:2] + [2.0] + a[3:], TypeError, r"argument 2 \('n'\) must be an index scalar, got float"),
    (lambda a: a[:3] + ["1.5"] + a[4:], TypeError, r"argument 3 \('s'\) must be a f64 scalar, got str"),
    (lambda a: a[:4] + [1] + a[5:], TypeError, r"argument 4 \('flag'\) must be an i1 scalar, got int"),
    (lambda a: a[:5] + [2**40], OverflowError, r"argument 5 \('k'\) = 1099511627776 does not fit in i32"),
    (lambda a: a[:2] + [2**70] + a[3:], OverflowError, r"argument 2 \('n'\) = \d+ does not fit in index"),
    (lambda a: a[:2] + [5] + a[3:], IndexError,
     r"index 5 is out of bounds for axis 0 with size 5 \(at <compile_module>:4:\d+\)"),
    (lambda a: a[:2] + [-1] + a[3:], IndexError, r"index -1 is out of bounds for axis 0 with size 5"),
]


@pytest.mark.parametrize("make,exc,message", ERRORS)
def test_argument_errors_name_the_parameter(mod, make, exc, message):
    with pytest.raises(exc, match=message):
        mod.mix(*make(good_args()))
    assert mod.mix(*good_args())[0] == 3.0  # the error slot was left clean


def test_read_only_array_for_a_written_parameter(mod):
    args = good_args()
    args[1].flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 1 \('y'\) is read-only, but the function writes to it"):
        mod.mix(*args)
    args = good_args()
    args[0].flags.writeable = False  # x is only read
    assert mod.mix(*args)[0] == 3.0
    view = np.ones((3, 3)).T
    view.flags.writeable = False
    with pytest.raises(ValueError, match=r"argument 0 \('A'\) is read-only"):
        mod.scale_view(view, 2.0)


def test_bindings_raise_identical_messages():
    if len(BINDINGS) < 2:
        pytest.skip("numpy's layout differs: only the ctypes binding exists here")
    shim, slow = compile_module(TEXT, binding="shim"), compile_module(TEXT, binding="ctypes")
    for make, _, _ in ERRORS:
        messages = []
        for m in (shim, slow):
            with pytest.raises(Exception) as info:
                m.mix(*make(good_args()))
            messages.append((type(info.value), str(info.value)))
        assert messages[0] == messages[1]


def test_raw_entry_address_and_signature():
    m = compile_module(TEXT)
    f = m["mix"]
    assert [p.name for p in f.parameters] == ["x", "y", "n", "s", "flag", "k"]
    assert str(inspect.signature(f)) == "(x, y, n, s, flag, k, /)"
    assert f.raw(*good_args()) == f(*good_args())
    with pytest.raises(TypeError, match="takes 6 positional arguments but 0 were given"):
        f.raw()
    assert f.address == m.address("mix") != 0
    # The internal ABI: memref -> (ptr, offset, size..., stride...), scalars as is.
    add = compile_module("func.func @add(%a: f64, %b: f64) -> f64 {\n"
                         "  %r = arith.addf %a, %b : f64\n  func.return %r : f64\n}")
    c_add = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double)(add["add"].address)
    assert c_add(1.25, 2.5) == 3.75
    with pytest.raises(KeyError, match="no public function '@nope'"):
        m["nope"]


def test_numpy_layout_probe_passes_here():
    # The fast path is what this machine uses; the probe compares the
    # offsets the shims read with numpy's own accessors.
    assert numpy_layout_ok() is FAST_PATH is True


def test_binding_option_is_checked():
    with pytest.raises(ValueError, match="binding must be"):
        compile_module(TEXT, binding="cffi")


def test_module_cache_and_key_cost(monkeypatch):
    from adpasses.core.context import parse_module

    text = TEXT.replace("@nothing", "@nothing_cached")
    optimised: list[int] = []  # LLVM optimisation runs (the cost a cache hit must skip)
    real = llvm_jit._optimized_module
    monkeypatch.setattr(llvm_jit, "_optimized_module",
                        lambda *a, **k: optimised.append(1) or real(*a, **k))
    before = dict(llvm_jit.stats)
    first = compile_module(parse_module(text))
    assert len(optimised) == 1
    again = compile_module(parse_module(text))  # a new xDSL module, same program
    assert again is first
    assert len(optimised) == 1  # the key (lowering + sha1 of the LLVM IR) found it: LLVM did not run
    assert llvm_jit.stats["compiled"] == before["compiled"] + 1
    assert llvm_jit.stats["cache_hits"] == before["cache_hits"] + 1
    assert compile_module(text) is compile_module(text)  # text: keyed by its contents
    assert compile_module(text, boundscheck=False) is not compile_module(text)


def test_allocation_counters():
    m = compile_module("""
func.func @bufs(%n: index) {
  %a = memref.alloc(%n) : memref<?xf64>
  %b = memref.alloc() : memref<3x5xi32>
  %t = ad.tape.create %n : !ad.tape<f32>
  ad.tape.free %t : !ad.tape<f32>
  memref.dealloc %a : memref<?xf64>
  memref.dealloc %b : memref<3x5xi32>
  func.return
}""", workspace=False)
    # %b (60 bytes, constant sizes, never escapes) is a stack slot
    # (ad-promote-scratch); workspace=False: %a and the tape per call.
    runtime.reset_stats()
    assert runtime.stats()["allocations"] == 0
    m.bufs(10)
    assert runtime.stats() == {"allocations": 2, "bytes": 80 + 40}
    m.bufs(1)
    assert runtime.stats() == {"allocations": 4, "bytes": 120 + 8 + 4}
    runtime.reset_stats()
    assert runtime.stats() == {"allocations": 0, "bytes": 0}


def test_names_that_are_python_keywords_or_clash():
    m = compile_module("""
func.func @lambda(%for: f64, %_entry: f64, %x: f64, %x_1: f64) -> f64 {
  %r = arith.addf %for, %_entry : f64
  func.return %r : f64
}""")
    f = m["lambda"]
    assert f(1.0, 2.0, 0.0, 0.0) == 3.0
    assert [p.name for p in f.parameters][:2] == ["arg0", "arg1"]
    assert re.search(r"argument 0 \('arg0'\)", _message(lambda: f("a", 1.0, 0.0, 0.0)))


def _message(call) -> str:  # type: ignore[no-untyped-def]
    try:
        call()
    except Exception as err:  # noqa: BLE001
        return str(err)
    return ""


def test_auto_binding_falls_back_to_ctypes_when_numpy_layout_differs(monkeypatch):
    from adpasses.native import pyentry

    monkeypatch.setattr(pyentry, "FAST_PATH", False)
    m = compile_module(TEXT.replace("@nothing", "@nothing_fallback"))
    assert m.mix.raw is m.mix  # the ctypes caller has no separate builtin
    assert m.mix(*good_args()) == (3.0, 2, True, 7)
    with pytest.raises(RuntimeError, match="use binding='ctypes'"):
        compile_module(TEXT, binding="shim")


def test_static_strides_and_offsets_in_the_type_are_checked():
    text = """
func.func @second(%x: memref<?xf64, strided<[2], offset: ?>>) -> f64 {
  %c1 = arith.constant 1 : index
  %v = memref.load %x[%c1] : memref<?xf64, strided<[2], offset: ?>>
  func.return %v : f64
}
func.func @shifted(%x: memref<?xf64, strided<[1], offset: 3>>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<?xf64, strided<[1], offset: 3>>
  func.return %v : f64
}"""
    x = np.arange(10.0)
    for binding in BINDINGS:
        m = compile_module(text, binding=binding)
        assert m.second(x[::2]) == 2.0
        with pytest.raises(ValueError, match=r"argument 0 \('x'\) has strides \(3,\) \(in elements\), "
                                             r"but the parameter type requires \(2,\)"):
            m.second(x[::3])
        with pytest.raises(ValueError, match=r"the parameter type has the static offset 3"):
            m.shifted(x)
