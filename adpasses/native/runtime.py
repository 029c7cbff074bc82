"""The runtime generated code talks to: allocation counters and an error slot.

Both are plain memory owned by this module (ctypes buffers) whose addresses
are given to LLVM under fixed symbol names, so generated code updates them
directly with loads and stores: no Python callback on any path (but the
Python `print` of compiled code, adpasses.native.python_print).

- `adpasses_alloc_stats` [2 x i64]: heap allocations and bytes requested by
  generated code (memref.alloc, tapes, tape growth) since `reset_stats()`.
- the error slot [5 x i64]: flag, check site, index, axis, size of the
  first out-of-bounds access of the current call (see adpasses.native.pyentry).
  Each thread has its own, found through the pthread key whose value is in
  `adpasses_error_key` (made on the thread's first compiled call, freed by
  the key's destructor `free` when the thread ends); `adpasses_error_slot`
  is the one of threads that call compiled code only through `.address`,
  and `adpasses_error_pending` counts stops recorded and not yet taken
  (adpasses.lowering.thread_state).
  axis -1 is an integer division by zero, axis -2 - d a shadow argument
  whose size `index` in dimension d is not its primal's `size`
  (`ad.shadow_check`); the codes of `adpasses.core.stop_codes` (below -2**40)
  are allocation sizes, float-to-int conversions and loop steps.

`register_symbols()` also compiles, once, the half-precision conversions
that LLVM's code generator may call (`__truncdfhf2`, ...: compiler-rt
functions a Python process does not have; adpasses.lowering.half).
"""

from __future__ import annotations

import ctypes
import os

import numpy as np

from adpasses.core import print_codes
from adpasses.core.compile_locks import LLVM_LOCK
from adpasses.core.parallel import check_min_work, check_num_threads, check_spin_us, startup_min_work, \
    startup_num_threads, startup_spin_us
from adpasses.native import python_print
from adpasses.native.arguments import HONOURED_ARRAY_TYPES

_STATS = (ctypes.c_int64 * 2)()
_HANDED = (ctypes.c_int64 * 2)()
"""Buffers of generated code handed to numpy with the arrays a compiled
function returns (counted by the entries), and those numpy has freed since
(counted by `adpasses_release_buffer`, the destructor of their capsules)."""
ERROR_SLOT = (ctypes.c_int64 * 5)()
ERROR_PENDING = (ctypes.c_int64 * 1)()
ERROR_KEY = (ctypes.c_int64 * 1)()
NUM_THREADS = (ctypes.c_int64 * 1)()
"""The threads of parallel loops (`adpasses_num_threads`; docs/parallel.md)."""
MIN_WORK = (ctypes.c_int64 * 1)()
"""The least estimated work (operations) per chunk of a parallel loop
(`adpasses_parallel_min_work`; adpasses.lowering.parallel)."""
SPIN_NS = (ctypes.c_int64 * 1)()
"""How long pool threads spin before sleeping, in ns (`adpasses_parallel_spin_ns`;
adpasses.lowering.thread_state); -1 until read from the environment."""
SPIN_NS[0] = -1
POOL_WORDS = 64  # adpasses.lowering.thread_state.POOL_WORDS (no xDSL import here)
POOL = (ctypes.c_int64 * POOL_WORDS)()
"""The worker pool of parallel loops (`adpasses_parallel_pool`: its fields
are adpasses.lowering.thread_state's POOL_*)."""


def _fresh_pool_in_child() -> None:
    # The child has none of the pool's threads, and a loop that held the
    # pool at the fork (on another thread) never gives it back there: the
    # child starts with no pool (made again by its first parallel loop).
    ctypes.memset(POOL, 0, ctypes.sizeof(POOL))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_pool_in_child)
_registered = False
_objects_registered = False

# Python type objects generated code compares with, by symbol name: code
# refers to them by name (never by address), so that its object code can be
# loaded by another process (adpasses.native.object_cache).
# numpy scalars whose conversion (PyFloat_AsDouble, PyLong_AsLongLong,
# truth) is numpy's C code, never a Python method: calls passing exactly
# these types may take the fast paths, like float, int and bool.
NUMPY_SCALARS = {"float": (np.float64, np.float32), "int": (np.int64, np.int32), "bool": (np.bool_,)}
PYTHON_OBJECTS = {
    "adpasses_py_bool": bool,
    **{f"adpasses_py_numpy_{np.dtype(cls).name}": cls for kind in NUMPY_SCALARS.values() for cls in kind},
    **{f"adpasses_py_numpy_{cls.__name__}": cls for cls in HONOURED_ARRAY_TYPES},
}
_SYMBOL_OF = {id(obj): name for name, obj in PYTHON_OBJECTS.items()}


def python_object_symbol(obj: object) -> str:
    """The symbol generated code uses for the address of `obj`."""
    return _SYMBOL_OF[id(obj)]


def register_python_objects() -> None:
    """Make the buffers and the Python objects visible to the JIT linker
    (cheap; once per process). Enough for object code that needs no
    half-precision conversions."""
    global _objects_registered
    if _objects_registered:
        return
    import llvmlite.binding as llvm

    with LLVM_LOCK:
        if _objects_registered:
            return
        ERROR_KEY[0] = _error_slot_key()
        llvm.add_symbol("adpasses_alloc_stats", ctypes.addressof(_STATS))
        llvm.add_symbol("adpasses_error_slot", ctypes.addressof(ERROR_SLOT))
        llvm.add_symbol("adpasses_error_pending", ctypes.addressof(ERROR_PENDING))
        llvm.add_symbol("adpasses_error_key", ctypes.addressof(ERROR_KEY))
        llvm.add_symbol("adpasses_handed_stats", ctypes.addressof(_HANDED))
        if NUM_THREADS[0] == 0:
            NUM_THREADS[0] = startup_num_threads()
        llvm.add_symbol("adpasses_num_threads", ctypes.addressof(NUM_THREADS))
        if MIN_WORK[0] == 0:
            MIN_WORK[0] = startup_min_work()
        llvm.add_symbol("adpasses_parallel_min_work", ctypes.addressof(MIN_WORK))
        if SPIN_NS[0] < 0:
            SPIN_NS[0] = 1000 * startup_spin_us()
        llvm.add_symbol("adpasses_parallel_spin_ns", ctypes.addressof(SPIN_NS))
        llvm.add_symbol("adpasses_parallel_pool", ctypes.addressof(POOL))
        llvm.add_symbol("adpasses_numpy_api", numpy_api_table())
        for name, obj in PYTHON_OBJECTS.items():
            llvm.add_symbol(name, id(obj))
        llvm.add_symbol(print_codes.SYMBOL, python_print.address())  # the frontend's print()
        _objects_registered = True


def _error_slot_key() -> int:
    """A pthread key for the threads' error slots, whose destructor frees a
    thread's slot when the thread ends."""
    libc = ctypes.CDLL(None)
    create = libc.pthread_key_create
    create.argtypes, create.restype = [ctypes.c_void_p, ctypes.c_void_p], ctypes.c_int
    key = ctypes.c_uint(0)  # pthread_key_t (glibc, musl: unsigned int)
    status = create(ctypes.byref(key), ctypes.cast(libc.free, ctypes.c_void_p))
    if status != 0:
        raise RuntimeError(f"adpasses: pthread_key_create failed (error {status}): no thread-local "
                           "error slots for compiled code")
    return key.value


_thread_runtime: object = None  # keeps the compiled thread-state runtime alive


def register_thread_runtime() -> None:
    """Compile (or load from the runtime disk cache) the thread-state
    runtime (adpasses.lowering.thread_state: error slots, workspace pools)
    and make its functions visible to the JIT linker; once per process.
    Every generated module calls it."""
    global _thread_runtime
    if _thread_runtime is not None:
        return
    import llvmlite.binding as llvm

    with LLVM_LOCK:
        if _thread_runtime is not None:
            return
        from adpasses.native.object_cache import runtime_machine_code

        def build_ir() -> str:  # xDSL is imported only when not in the disk cache
            from adpasses.lowering.thread_state import runtime_module

            return str(runtime_module())

        code = runtime_machine_code("thread_state", _THREAD_RUNTIME_SOURCES, build_ir)
        for name in THREAD_RUNTIME_FUNCTIONS:
            llvm.add_symbol(name, code.address(name))
        _thread_runtime = code


def numpy_api_table() -> int:
    """The address of numpy's C API table (`PyArray_API`, what
    `import_array()` reads): generated code calls `PyArray_New` and
    `PyArray_SetBaseObject` through it to return arrays."""
    try:
        from numpy._core import _multiarray_umath as multiarray
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as multiarray  # type: ignore[no-redef]
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return int(get(multiarray._ARRAY_API, None))


_THREAD_RUNTIME_SOURCES = ("adpasses.lowering.thread_state", "adpasses.core.llvm_loops", "adpasses.native.runtime")
THREAD_RUNTIME_FUNCTIONS = ("adpasses_entry_slot", "adpasses_stopped", "adpasses_record_stop",
                            "adpasses_workspace_take", "adpasses_workspace_give_back",
                            "adpasses_release_buffer", "adpasses_parallel_run")
"""The names of adpasses.lowering.thread_state.RUNTIME_FUNCTIONS (this
module imports no xDSL, which that one does)."""
_half_engine: object = None  # keeps the compiled half conversions alive


def register_symbols() -> None:
    """Make the buffers, and the half-precision conversions LLVM may call
    (adpasses.lowering.half), visible to the JIT linker (once per process)."""
    if _registered:
        return
    with LLVM_LOCK:  # once, even when several threads make their first call at once
        if not _registered:
            _register_symbols()


def _register_symbols() -> None:
    global _registered, _half_engine
    import llvmlite.binding as llvm

    from adpasses.lowering.half import SYMBOLS, half_runtime_module

    register_python_objects()
    register_thread_runtime()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = llvm.Target.from_triple(llvm.get_process_triple())
    module = llvm.parse_assembly(str(half_runtime_module()))
    _half_engine = llvm.create_mcjit_compiler(module, target.create_target_machine(opt=2, jit=True))
    _half_engine.finalize_object()  # type: ignore[attr-defined]
    for name in SYMBOLS:
        llvm.add_symbol(name, _half_engine.get_function_address(name))  # type: ignore[attr-defined]
    _registered = True


def set_num_threads(n: int) -> None:
    """The number of threads parallel loops (`prange`, `jit(parallel=True)`)
    run on from now on, in every thread of the process (default:
    ADPASSES_NUM_THREADS, else os.cpu_count()). Results of parallel sums
    depend on it (docs/parallel.md, "Determinism")."""
    NUM_THREADS[0] = check_num_threads(n)


def get_num_threads() -> int:
    """The number of threads parallel loops run on."""
    if NUM_THREADS[0] == 0:
        NUM_THREADS[0] = startup_num_threads()
    return int(NUM_THREADS[0])


def set_parallel_min_work(work: int) -> int:
    """The least estimated work (operations, >= 1) a chunk of a parallel
    loop gets from now on (default: ADPASSES_PARALLEL_MIN_WORK, else
    adpasses.core.parallel.DEFAULT_MIN_WORK): a loop of n iterations of w
    operations each runs in at most n * w / work chunks. Returns the
    previous setting. (1: one chunk per thread whenever there are
    iterations enough; tests use it.)"""
    value = check_min_work(work)
    before = get_parallel_min_work()
    MIN_WORK[0] = value
    return before


def get_parallel_min_work() -> int:
    """The least estimated work per chunk of a parallel loop."""
    if MIN_WORK[0] == 0:
        MIN_WORK[0] = startup_min_work()
    return int(MIN_WORK[0])


def set_parallel_spin(us: int) -> int:
    """How long (microseconds, 0 to 10^6) a pool thread that finished its
    chunks spins waiting for the next parallel loop, and a loop that ran
    its chunks spins waiting for the others', before sleeping on a
    condition variable (default: ADPASSES_PARALLEL_SPIN_US, else
    adpasses.core.parallel.DEFAULT_SPIN_US). Waking a sleeping thread costs
    tens of microseconds on a virtual machine; spinning costs the core
    meanwhile. 0: sleep at once. Returns the previous setting."""
    value = check_spin_us(us)
    before = get_parallel_spin()
    SPIN_NS[0] = 1000 * value
    return before


def get_parallel_spin() -> int:
    """How long pool threads spin before sleeping, in microseconds."""
    if SPIN_NS[0] < 0:
        SPIN_NS[0] = 1000 * startup_spin_us()
    return int(SPIN_NS[0]) // 1000


def pool_stats() -> dict[str, int]:
    """The worker pool of parallel loops in this process: `workers` started,
    `pooled_loops` run on it, `busy_serial_loops` run on their own thread
    because another loop held the pool (docs/parallel.md)."""
    from adpasses.core.parallel import POOL_FIELDS

    return {name: int(POOL[k]) for name, k in POOL_FIELDS.items()}


def stats() -> dict[str, int]:
    """Heap allocations and bytes made by generated code since the last reset."""
    return {"allocations": int(_STATS[0]), "bytes": int(_STATS[1])}


def handed_arrays() -> dict[str, int]:
    """Buffers generated code handed to numpy (as the memory of returned
    arrays) and buffers numpy has freed, since the process started: equal
    once every such array is gone."""
    return {"handed": int(_HANDED[0]), "freed": int(_HANDED[1])}


def reset_stats() -> None:
    _STATS[0] = 0
    _STATS[1] = 0
