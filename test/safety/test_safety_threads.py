"""Threads (issue 13, item 1): first calls of `jit`, `grad`, `value_and_grad`
and `autodiff` from several threads at once. Each signature compiles once
(the other threads wait and reuse it), compiled code is never freed while a
fast path, cache or caller can still jump into it, and every thread gets its
own right result and its own errors.

Each case runs in a fresh process (`run_isolated`): before the fix, 8
threads making a first `autodiff` call crashed the interpreter (SIGSEGV in
6 of 6 runs of the reproducer); here every case makes many first calls
(fresh functions, `fresh_kernels.py`) with a switch interval of 1 us, and
compares every result with the hand-derived value.
"""

from __future__ import annotations

import numpy as np
import pytest

import fresh_kernels as F
from finite_diff import assert_matches, finite_differences
from isolate import run_isolated

PRELUDE = """
import sys, threading, numpy as np
sys.setswitchinterval(1e-6)
import adpasses, fresh_kernels as F
from adpasses import Duplicated, Active, Const
from thread_runner import in_threads
"""


def run(body: str, timeout: float = 300) -> str:
    result = run_isolated(PRELUDE + body, timeout=timeout)
    assert result.returncode == 0, str(result)
    return result.stdout


def test_reference_gradient_of_the_fresh_kernels():
    """The hand-derived gradient the isolated cases compare with is right."""
    rng = np.random.default_rng(1)
    for k in (0, 7):
        x = rng.uniform(-1.5, 1.5, 9)
        assert_matches(F.gradient(k, x), finite_differences(lambda v: F.value(k, v), [x], [0])[0])


def test_first_autodiff_call_from_8_threads():
    out = run("""
for k in range(8):
    f = F.fresh(k)
    def work(t, k=k, f=f):
        x = np.random.default_rng(t).uniform(-1, 1, 16)
        want = F.gradient(k, x)
        for _ in range(30):
            dx = np.zeros(16)
            adpasses.autodiff(f, Duplicated(x, dx))
            assert np.array_equal(dx, want) or np.allclose(dx, want, rtol=1e-12, atol=1e-14), (dx, want)
    in_threads(8, work)
print("ok")
""")
    assert out.strip() == "ok"


def test_first_grad_and_value_and_grad_calls_from_8_threads():
    out = run("""
for k in range(8):
    f = F.fresh(k)
    def work(t, k=k, f=f):
        x = np.random.default_rng(t).uniform(-1, 1, 12)
        for _ in range(30):
            g = adpasses.grad(f)(x) if t % 2 else adpasses.value_and_grad(f)(x)[1]
            assert np.allclose(g, F.gradient(k, x), rtol=1e-12, atol=1e-14)
        v, g = adpasses.value_and_grad(f)(x)
        assert abs(v - F.value(k, x)) <= 1e-12 * max(1, abs(v))
    in_threads(8, work)
print("ok")
""")
    assert out.strip() == "ok"


def test_first_calls_of_every_kind_at_once():
    """Primal, grad, value_and_grad and autodiff (with an Active scalar and a
    float32 signature) of the same fresh function, all first calls at once."""
    out = run("""
for k in range(6):
    f = F.fresh(k)
    def work(t, k=k, f=f):
        x = np.random.default_rng(t).uniform(-1, 1, 10)
        for _ in range(20):
            kind = t % 4
            if kind == 0:
                assert abs(f(x) - F.value(k, x)) <= 1e-12
            elif kind == 1:
                assert np.allclose(adpasses.grad(f)(x), F.gradient(k, x), rtol=1e-12, atol=1e-14)
            elif kind == 2:
                x32 = x.astype(np.float32)
                g = adpasses.grad(f)(x32)
                assert g.dtype == np.float32
                assert np.allclose(g, F.gradient(k, x32.astype(np.float64)), rtol=1e-4, atol=1e-5)
            else:
                dx = np.zeros(10)
                (_,), v = adpasses.autodiff(f, Duplicated(x, dx), return_primal=True)
                assert np.allclose(dx, F.gradient(k, x), rtol=1e-12, atol=1e-14)
                assert abs(v - F.value(k, x)) <= 1e-12
    in_threads(8, work)
print("ok")
""")
    assert out.strip() == "ok"


def test_first_use_of_the_whole_library_from_threads():
    """Nothing initialised on the main thread: the process's first compiled
    code of all (runtime symbols, dispatch builtins, LLVM targets) is asked
    for by 8 threads at once, each with a function of its own and one
    shared by all."""
    out = run("""
shared = F.fresh(0)
mine = [F.fresh(1 + t) for t in range(8)]
def work(t):
    x = np.random.default_rng(t).uniform(-1, 1, 8)
    for f, k in ((mine[t], 1 + t), (shared, 0)):
        dx = np.zeros(8)
        adpasses.autodiff(f, Duplicated(x, dx))
        assert np.allclose(dx, F.gradient(k, x), rtol=1e-12, atol=1e-14)
        assert np.allclose(adpasses.grad(f)(x), F.gradient(k, x), rtol=1e-12, atol=1e-14)
        assert abs(f(x) - F.value(k, x)) <= 1e-12
in_threads(8, work)
print("ok")
""")
    assert out.strip() == "ok"


def test_process_initialisation_happens_once():
    """The per-process compiled helpers (runtime symbols and the half
    conversions, the dispatch builtins) are made once when 8 threads need
    them first at once: a second copy would replace the first, whose code
    the first tables and symbols still point into."""
    out = run("""
import llvmlite.binding as llvm
from adpasses.native import dispatch
made, symbols = [], []
init = dispatch._Compiled.__init__
def counting_init(self):
    made.append(1)
    init(self)
dispatch._Compiled.__init__ = counting_init
add_symbol = llvm.add_symbol
def counting_add_symbol(name, address):
    symbols.append(name)
    add_symbol(name, address)
llvm.add_symbol = counting_add_symbol
def work(t):
    x = np.random.default_rng(t).uniform(-1, 1, 4)
    assert dispatch.signature_code(x) != 0
    assert abs(F.fresh(t)(x) - F.value(t, x)) <= 1e-12
in_threads(8, work)
assert len(made) == 1, len(made)
assert symbols.count("adpasses_error_slot") == 1, symbols
print("ok")
""")
    assert out.strip() == "ok"


def test_each_signature_compiles_once():
    """8 threads asking for the same gradient at once: one compilation, the
    same compiled object for all (before the fix: up to one per thread, and
    the last one replaced the others in the caches)."""
    out = run("""
from adpasses.native import llvm_jit
F.fresh(99)(np.ones(3))                    # library initialised
for k in range(5):
    f = F.fresh(k)
    before = llvm_jit.stats["compiled"]
    seen = []
    def work(t, f=f):
        x = np.random.default_rng(t).uniform(-1, 1, 6)
        adpasses.grad(f)(x)
        seen.append(id(f._gradients[next(iter(f._gradients))].compiled))
    in_threads(8, work)
    assert llvm_jit.stats["compiled"] - before == 1, llvm_jit.stats["compiled"] - before
    assert len(set(seen)) == 1
    before = llvm_jit.stats["compiled"]
    in_threads(8, lambda t, f=f: f(np.ones(4)))
    assert llvm_jit.stats["compiled"] - before == 1
print("ok")
""")
    assert out.strip() == "ok"


def test_callables_keep_their_code_alive():
    """Whatever can still jump into compiled code keeps it: a `.raw` builtin
    whose module is gone from every cache, an autodiff fast path whose
    jitted function was collected, the dispatch builtin of a dropped
    `grad(f)` (module caches hold modules weakly; memory is reused by new
    compilations before the calls)."""
    out = run("""
import gc, weakref
from adpasses.native import llvm_jit
text = '''func.func @twice(%x: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<?xf64>
  %r = arith.addf %v, %v : f64
  func.return %r : f64
}'''
raw = llvm_jit.compile_module(text)["twice"].raw
llvm_jit.clear_caches()                    # only `raw` holds that module now
x = np.linspace(-1, 1, 5)
f = F.fresh(1)
dx = np.zeros(5); adpasses.autodiff(f, Duplicated(x, dx))
autodiff_fast = next(iter(f._autodiff_fast.values()))
jf = weakref.ref(f)
g = adpasses.grad(F.fresh(2)); g(x)
dispatch = type(g).__call__
del f, g
for _ in range(3): gc.collect()
assert jf() is None and text not in [key[0] for key in llvm_jit._TEXT_CACHE]
junk = [llvm_jit.compile_module(text.replace("@twice", f"@other{k}"), opt_level=0) for k in range(20)]
del junk; llvm_jit.clear_caches(); gc.collect()
for _ in range(100):
    assert raw(np.array([3.0, 1.0])) == 6.0
    assert np.allclose(dispatch(x), F.gradient(2, x), rtol=1e-12, atol=1e-14)
    dx = np.zeros(5)
    autodiff_fast((Duplicated(x, dx),), 1.0)
    assert np.allclose(dx, F.gradient(1, x), rtol=1e-12, atol=1e-14)
print("ok")
""")
    assert out.strip() == "ok"


@pytest.mark.parametrize("binding", ["shim", "ctypes"])
def test_bounds_errors_name_the_calling_threads_index(binding):
    """The error slot is shared by all compiled code: each thread's
    IndexError must still report the index that thread used, and no stop
    may be lost or reported to another thread (threads alternate good and
    out-of-bounds calls)."""
    out = run(f"""
from adpasses.native.llvm_jit import compile_module
m = compile_module('''func.func @read_at(%x: memref<?xf64>, %i: index) -> f64 {{
  %v = memref.load %x[%i] : memref<?xf64>
  func.return %v : f64
}}''', binding={binding!r})
read_at = m["read_at"]
x = np.arange(5.0)
def work(t):
    for n in range(400):
        assert read_at(x, t % 5) == float(t % 5)
        try:
            read_at(x, 100 + t)
        except IndexError as e:
            assert f"index {{100 + t}} is out of bounds" in str(e), (t, str(e))
        else:
            raise AssertionError("no IndexError for index %d" % (100 + t))
in_threads(8, work)
print("ok")
""")
    assert out.strip() == "ok"


def test_ctypes_binding_results_under_threads():
    """The ctypes binding gives every call its own result buffer and holds
    the GIL in compiled code (tape workspaces are module globals): results
    of concurrent calls are each thread's own."""
    out = run("""
from adpasses.native.llvm_jit import compile_module
m = compile_module('''func.func @pair(%x: memref<?xf64>, %a: f64) -> (f64, f64) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<?xf64>
  %s = arith.addf %v, %a : f64
  %p = arith.mulf %v, %a : f64
  func.return %s, %p : f64, f64
}''', binding="ctypes")
pair = m["pair"]
def work(t):
    x = np.array([float(t)])
    for n in range(3000):
        a = float(n)
        assert pair(x, a) == (t + a, t * a), (t, n, pair(x, a))
in_threads(8, work)
print("ok")
""")
    assert out.strip() == "ok"
