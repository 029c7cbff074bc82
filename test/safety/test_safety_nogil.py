"""Compiled calls with the GIL released (issue 17, item 4).

Entries release the GIL around the compiled call of every function with a
loop (docs/calling_convention.md), so several threads run compiled code at
once, the same function included. What must hold:

- each thread gets exactly the single-thread result, on data of its own
  and on shared read-only inputs, for primal calls and for gradients whose
  tapes live in the per-site workspace pools (more threads than a pool
  holds included);
- a stop (bounds error) is reported to the thread that made it, with its
  own index, while other threads keep computing right results; a stop
  gives the workspace buffer back to its pool;
- the GIL really is released: another Python thread makes progress while a
  compiled loop runs (a behavioural check, no wall-clock bound);
- threads that end free their error slots (many short-lived threads).

The thread cases run in a fresh process (`run_isolated`) with a short
switch interval, like test_safety_threads.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from isolate import run_isolated

PRELUDE = """
import sys, threading, numpy as np
sys.setswitchinterval(1e-5)
import adpasses
from adpasses.native import runtime
from adpasses.native.llvm_jit import compile_module
from thread_runner import in_threads

from nogil_kernels import inplace_square, inplace_square_at
"""

READ_AT = """func.func @read_at(%x: memref<?xf64>, %i: index) -> f64 {
  %v = memref.load %x[%i] : memref<?xf64>
  func.return %v : f64
}"""

# A loop the optimizer cannot shorten (float recurrence without fastmath);
# each iteration also reads x[i mod n] with a bounds check.
SPIN = """func.func @spin(%x: memref<?xf64>, %steps: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = arith.constant 0.999999 : f64
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %steps step %c1 iter_args(%acc = %z) -> (f64) {
    %j = arith.remui %i, %n : index
    %v = memref.load %x[%j] : memref<?xf64>
    %m = arith.mulf %acc, %a : f64
    %s = arith.addf %m, %v : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}"""


def run(body: str, timeout: float = 300) -> str:
    result = run_isolated(PRELUDE + body, timeout=timeout)
    assert result.returncode == 0, str(result)
    return result.stdout


def test_straight_line_functions_keep_the_gil_and_loops_release_it():
    """The rule (adpasses.native.pyentry.releases_gil) on the IR of the
    entries: a loop or a call of a defined function releases, straight-line
    code does not (releasing would cost more than running it)."""
    from adpasses.core.context import parse_module
    from adpasses.lowering.core import ModuleTranslator
    from adpasses.native.pyentry import add_entry_shim
    from xdsl.dialects import func

    text = SPIN + """
func.func @add(%a: f64, %b: f64) -> f64 {
  %s = arith.addf %a, %b : f64
  func.return %s : f64
}
func.func @calls(%x: memref<?xf64>) -> f64 {
  %c3 = arith.constant 3 : index
  %r = func.call @spin(%x, %c3) : (memref<?xf64>, index) -> f64
  func.return %r : f64
}"""
    m = parse_module(text)
    mt = ModuleTranslator(m, boundscheck=True, fastmath=False)
    mt.translate()
    released = {}
    for f in m.ops:
        if isinstance(f, func.FuncOp):
            name = add_entry_shim(mt, f)
            released[f.sym_name.data] = "PyEval_SaveThread" in str(mt.llvm.globals[name])
    assert released == {"spin": True, "add": False, "calls": True}


def test_another_python_thread_runs_during_a_compiled_loop():
    """With a switch interval of 1 s the main thread never yields the GIL
    on its own during the test: the counting thread can only run while the
    main thread is inside a compiled call that released it. It counts the
    iterations in which it saw the main thread inside the call; with the
    GIL held, it would see none. Both bindings."""
    out = run(f'''
SPIN = {SPIN!r}
sys.setswitchinterval(1.0)
for binding in ("shim", "ctypes"):
    spin = compile_module(SPIN, binding=binding)["spin"]
    x = np.linspace(0.0, 1.0, 7)
    want = spin(x, 1000)
    state = {{"in_call": False, "seen": 0, "stop": False, "started": False}}
    def count():
        state["started"] = True
        while not state["stop"]:
            if state["in_call"]:
                state["seen"] += 1
    counter = threading.Thread(target=count)
    counter.start()
    while not state["started"]:
        pass
    seen = []
    for _ in range(3):
        state["seen"] = 0
        state["in_call"] = True
        spin(x, 30_000_000)
        state["in_call"] = False
        seen.append(state["seen"])
    state["stop"] = True
    counter.join()
    assert spin(x, 1000) == want
    assert max(seen) > 0, (binding, seen)
    print(binding, seen)
print("ok")
''')
    assert out.strip().endswith("ok")


def test_threads_calling_the_same_compiled_function_get_their_own_results():
    """16 threads, one compiled function (bounds-checked loop), separate
    data and one shared read-only array: every result is the
    single-thread one, bit for bit."""
    out = run(f"""
spin = compile_module({SPIN!r})["spin"]
shared = np.linspace(-1.0, 1.0, 11)
shared.setflags(write=False)
data = [np.random.default_rng(t).uniform(-1, 1, 5 + t) for t in range(16)]
want = [spin(d, 20_000 + t) for t, d in enumerate(data)]
want_shared = spin(shared, 50_000)
def work(t):
    for _ in range(40):
        assert spin(data[t], 20_000 + t) == want[t], t
        assert spin(shared, 50_000) == want_shared, t
in_threads(16, work)
print("ok")
""")
    assert out.strip() == "ok"


@pytest.mark.parametrize("threads", [4, 12])
def test_threads_calling_the_same_gradient_get_the_single_thread_gradient(threads):
    """A gradient with a workspace tape, called by more threads than a
    workspace pool holds (12 > 8) and by fewer: every thread's gradient is
    the single-thread one bit for bit (checked against 2 * x**3 * 2 ...
    through finite differences in test_reverse_kernels; here: equality with
    the single-thread call), on separate data and with a shared read-only
    primal."""
    out = run(f"""
g = adpasses.grad(adpasses.jit(inplace_square))
data = [np.random.default_rng(t).uniform(-1, 1, 200 + 7 * t) for t in range(16)]
want = [g(d.copy()) for d in data]
for d, w in zip(data, want):
    assert np.allclose(w, 4 * d**3, rtol=1e-13, atol=0)   # d/dx sum((x*x)**2)
def work(t):
    for _ in range(60):
        assert np.array_equal(g(data[t].copy()), want[t]), t
in_threads({threads}, work)
runtime.reset_stats()
g(data[0].copy())
# After the concurrent calls the pool holds buffers: a call of one thread
# takes one and allocates no tape.
assert runtime.stats()["allocations"] == 0, runtime.stats()
print("ok")
""")
    assert out.strip() == "ok"


def test_bounds_error_in_one_thread_while_others_compute():
    """One thread makes out-of-bounds calls of a gradient with a workspace
    tape; seven others make good calls of the same gradient and of a long
    bounds-checked loop. Errors reach only the failing thread, with its own
    index; the others' results stay exact; the failing calls gave their
    tape buffers back (a good call afterwards allocates nothing)."""
    out = run(f"""
spin = compile_module({SPIN!r})["spin"]
g = adpasses.grad(adpasses.jit(inplace_square_at), argnums=0)
x0 = np.random.default_rng(0).uniform(-1, 1, 300)
want = g(x0.copy(), 3)
want_spin = spin(x0, 100_000)
def work(t):
    for n in range(40):
        if t == 0:
            try:
                g(x0.copy(), 1000 + n)
            except IndexError as e:
                assert f"index {{1000 + n}} is out of bounds" in str(e), str(e)
            else:
                raise AssertionError("no IndexError")
        else:
            assert np.array_equal(g(x0.copy(), 3), want)
            assert spin(x0, 100_000) == want_spin
in_threads(8, work)
runtime.reset_stats()
assert np.array_equal(g(x0.copy(), 3), want)
assert runtime.stats()["allocations"] == 0, runtime.stats()
print("ok")
""")
    assert out.strip() == "ok"


@pytest.mark.parametrize("binding", ["shim", "ctypes"])
def test_short_lived_threads_each_with_a_stop(binding):
    """300 threads that each make one good and one failing call and end:
    every thread's slot is made on its first call and freed when it ends
    (the key's destructor); no stop leaks into the next thread."""
    out = run(f"""
read_at = compile_module({READ_AT!r}, binding={binding!r})["read_at"]
x = np.arange(4.0)
errors = []
def once(t):
    try:
        assert read_at(x, t % 4) == float(t % 4)
        try:
            read_at(x, 4 + t)
        except IndexError as e:
            assert f"index {{4 + t}} is out of bounds" in str(e)
        else:
            raise AssertionError("no IndexError")
        assert read_at(x, 1) == 1.0
    except BaseException as e:
        errors.append(repr(e))
for wave in range(30):
    threads = [threading.Thread(target=once, args=(10 * wave + k,)) for k in range(10)]
    for th in threads: th.start()
    for th in threads: th.join()
assert not errors, errors[:3]
assert runtime.ERROR_PENDING[0] == 0, runtime.ERROR_PENDING[0]
print("ok")
""")
    assert out.strip() == "ok"


def test_a_stop_gives_the_workspace_back_single_thread():
    """In-process: a call that stops after taking its tape buffer gives it
    back, so the next call allocates nothing (before the pools, the buffer
    stayed in a module global; a lost buffer would be one allocation per
    failing call)."""
    import adpasses
    from adpasses.native import runtime

    from nogil_kernels import inplace_square_at

    g = adpasses.grad(adpasses.jit(inplace_square_at), argnums=0)
    x = np.random.default_rng(1).uniform(-1, 1, 50)
    want = g(x.copy(), 2)
    expected = 4 * x**3
    expected[2] += 2 * x[2]
    np.testing.assert_allclose(want, expected, rtol=1e-13)
    for _ in range(5):
        runtime.reset_stats()
        with pytest.raises(IndexError, match="index 77 is out of bounds"):
            g(x.copy(), 77)
        assert runtime.stats()["allocations"] == 0
        assert np.array_equal(g(x.copy(), 2), want)
        assert runtime.stats()["allocations"] == 0
    assert runtime.ERROR_PENDING[0] == 0
