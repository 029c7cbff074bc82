"""Per-thread state of generated code: error slots and workspace pools.

Compiled calls run with the GIL released (docs/calling_convention.md), so
two threads may run compiled code at once, the same function included.
Nothing a call writes may be shared with another call:

- **Error slot.** A stop (out-of-bounds access, division by zero, failed
  allocation, ...) is recorded in the calling thread's own slot, five
  `i64` (flag, site, index, axis, size) allocated once per thread and
  found through a pthread key (`adpasses_error_key`, created by
  adpasses.native.runtime; the slot is freed by the key's destructor when
  the thread ends). LLVM's thread_local globals cannot be used: MCJIT has
  no TLS allocation. The entries (adpasses.native.pyentry, ctypes_entry)
  make the slot before the call, so a stop never allocates; a call made
  through `.address` by a thread that never went through an entry records
  in the process-wide `adpasses_error_slot`, as before.
  After a call that may stop, the caller must know whether its own thread
  stopped. Asking the pthread key after every call would cost a library
  call each time, so a process-wide counter `adpasses_error_pending`
  (stops recorded and not yet taken by an entry) is read first: it is 0
  unless some thread is stopping, and only then the thread's own flag is
  read (`adpasses_stopped`). Another thread's stop only sends a caller
  down that slow path; it never makes it stop.
- **Workspaces.** A tape buffer kept across calls (`ad.workspace`) lives
  in a pool of `WORKSPACE_POOL` buffers per tape site; a call takes one
  (compare-and-swap), grows it if needed, and gives it back when the tape
  is freed or the call stops; a call that finds the pool empty allocates,
  and gives back or frees. So each concurrent call has a buffer of its own,
  and up to `WORKSPACE_POOL` threads calling the same gradient allocate
  nothing after their first calls.
- **Allocation counters** (`adpasses_alloc_stats`) are added to atomically.

The functions doing this are one runtime module compiled once per process
(`runtime_module`; adpasses.native.runtime.register_thread_runtime), which
generated code calls by symbol: a module carries only the inline checks.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable

from llvmlite import ir

from adpasses.core.llvm_loops import counted_loop
from adpasses.lowering.core import I1, I32, I64, PTR, ModuleTranslator, const_i64, opaque

ERROR_SLOT = "adpasses_error_slot"
ERROR_PENDING = "adpasses_error_pending"
ERROR_KEY = "adpasses_error_key"
SLOT_TYPE = ir.ArrayType(I64, 5)
SLOT_BYTES = 5 * 8
WORKSPACE_POOL = 8
"""Buffers kept per tape site: the number of threads that may call the
same gradient at once without allocating a tape on each call."""
_BUSY = 1  # a pool entry being filled by a thread giving a buffer back


RUNTIME_FUNCTIONS = {
    "adpasses_entry_slot": (PTR, []),
    "adpasses_stopped": (I1, []),
    "adpasses_record_stop": (ir.VoidType(), [I64, I64, I64, I64]),
    "adpasses_workspace_take": (ir.VoidType(), [PTR, PTR, PTR]),
    "adpasses_workspace_give_back": (ir.VoidType(), [PTR, PTR, PTR]),
    "adpasses_release_buffer": (ir.VoidType(), [PTR]),
    "adpasses_parallel_run": (ir.VoidType(), [PTR, PTR, I64, I64]),
}
"""The functions of the thread-state runtime: compiled once per process
(`runtime_module`, adpasses.native.runtime.register_thread_runtime) and
called by every generated module through these external symbols, so no
module carries its own copy."""


def runtime_function(mt: ModuleTranslator, name: str) -> ir.Function:
    """The declaration of runtime function `name` in `mt`'s module."""
    ret, params = RUNTIME_FUNCTIONS[name]
    return mt.declare(name, ret, params)


class _RuntimeModule:
    """What the definitions below use of a ModuleTranslator, for the
    runtime module (no user code, so no clashes to check)."""

    def __init__(self) -> None:
        self.llvm = ir.Module(name="adpasses_thread_state")

    def global_ref(self, name: str, ty: ir.Type) -> ir.GlobalVariable:
        g = self.llvm.globals.get(name)
        if g is None:
            g = ir.GlobalVariable(self.llvm, ty, name)
            g.linkage = "external"
        return g

    def declare(self, name: str, ret: ir.Type, params: list[ir.Type]) -> ir.Function:
        fn = self.llvm.globals.get(name)
        return fn if fn is not None else ir.Function(self.llvm, ir.FunctionType(ret, params), name)


def _define(rm: _RuntimeModule, name: str) -> ir.Function:
    ret, params = RUNTIME_FUNCTIONS[name]
    return ir.Function(rm.llvm, ir.FunctionType(ret, params), name)


def runtime_module() -> ir.Module:
    """The thread-state runtime (error slots, workspace pools)."""
    rm = _RuntimeModule()
    thread_slot = _thread_slot(rm)
    _define_stopped(rm, thread_slot)
    _define_record_stop(rm, thread_slot)
    _define_entry_slot(rm)
    _define_workspace_take(rm)
    _define_workspace_give_back(rm)
    _define_release_buffer(rm)
    _define_parallel_run(rm)
    return rm.llvm


HANDED_STATS = "adpasses_handed_stats"
HANDED_TYPE = ir.ArrayType(I64, 2)


def _define_release_buffer(rm: _RuntimeModule) -> None:
    """`void adpasses_release_buffer(PyObject *capsule)`: the destructor of
    the capsule that owns the buffer of an array a compiled function
    returned (adpasses.native.array_results); numpy calls it, with the GIL,
    when the last view of the array goes. It lives here, in the process's
    runtime, because arrays outlive the module that made them."""
    fn = _define(rm, "adpasses_release_buffer")
    b = ir.IRBuilder(fn.append_basic_block())
    pointer = b.call(rm.declare("PyCapsule_GetPointer", PTR, [PTR, PTR]), [fn.args[0], ir.Constant(PTR, None)])
    b.call(rm.declare("free", ir.VoidType(), [PTR]), [pointer])
    stats = rm.global_ref(HANDED_STATS, HANDED_TYPE)
    freed = b.gep(stats, [const_i64(0), const_i64(1)], inbounds=True, source_etype=HANDED_TYPE)
    b.atomic_rmw("add", freed, const_i64(1), "monotonic")
    b.ret_void()


def pending(mt: ModuleTranslator, b: ir.IRBuilder) -> ir.Value:
    """Whether any thread has a stop not yet taken (a relaxed load)."""
    count = b.load_atomic(mt.global_ref(ERROR_PENDING, I64), "monotonic", 8, typ=I64)
    return b.icmp_unsigned("!=", count, const_i64(0))


def own_slot(mt: ModuleTranslator, b: ir.IRBuilder) -> ir.Value:
    """This thread's slot if it has one (pthread_getspecific), else NULL."""
    key = b.trunc(b.load(mt.global_ref(ERROR_KEY, I64), typ=I64), I32)
    return b.call(mt.declare("pthread_getspecific", PTR, [I32]), [key])


def slot_field(b: ir.IRBuilder, slot: ir.Value, k: int) -> ir.Value:
    return b.gep(slot, [const_i64(0), const_i64(k)], inbounds=True, source_etype=SLOT_TYPE)


def _thread_slot(rm: _RuntimeModule) -> ir.Function:
    """`ptr thread_slot()`: this thread's slot, or the process-wide one for
    a thread that never called through an entry."""
    fn = ir.Function(rm.llvm, ir.FunctionType(PTR, []), "thread_slot")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block())
    mine = own_slot(rm, b)  # type: ignore[arg-type]
    shared = rm.global_ref(ERROR_SLOT, SLOT_TYPE)
    b.ret(b.select(b.icmp_unsigned("==", mine, ir.Constant(PTR, None)), shared, mine))
    return fn


def _define_stopped(rm: _RuntimeModule, thread_slot: ir.Function) -> None:
    """`i1 adpasses_stopped()`: whether this thread's slot holds a stop."""
    fn = _define(rm, "adpasses_stopped")
    b = ir.IRBuilder(fn.append_basic_block())
    slot = b.call(thread_slot, [])
    b.ret(b.icmp_unsigned("!=", b.load(slot_field(b, slot, 0), typ=I64), const_i64(0)))


def branch_if_stopped(mt: ModuleTranslator, b: ir.IRBuilder, on_stop) -> None:  # type: ignore[no-untyped-def]
    """After a call that may stop: run `on_stop()` (which must end its
    block, e.g. return) if this thread stopped. One relaxed load on the
    path without a stop anywhere in the process."""
    with b.if_then(pending(mt, b), likely=False):
        with b.if_then(b.call(runtime_function(mt, "adpasses_stopped"), []), likely=True):
            on_stop()


def define_record_stop(mt: ModuleTranslator) -> None:
    """`__adpasses_oob(site, index, axis, size)` (the module's cold stop
    call): `adpasses_record_stop`."""
    fn = mt.llvm.globals.get("__adpasses_oob")
    if fn is None or not fn.is_declaration:
        return
    fn.linkage = "internal"
    fn.attributes.add("cold")
    fn.attributes.add("noinline")
    b = ir.IRBuilder(fn.append_basic_block())
    b.call(runtime_function(mt, "adpasses_record_stop"), list(fn.args))
    b.ret_void()


def _define_record_stop(rm: _RuntimeModule, thread_slot: ir.Function) -> None:
    """`adpasses_record_stop(site, index, axis, size)`: record a stop in
    this thread's slot (count it pending unless the slot already held one)."""
    fn = _define(rm, "adpasses_record_stop")
    b = ir.IRBuilder(fn.append_basic_block())
    slot = b.call(thread_slot, [])
    flag = slot_field(b, slot, 0)
    with b.if_then(b.icmp_unsigned("==", b.load(flag, typ=I64), const_i64(0))):
        b.atomic_rmw("add", rm.global_ref(ERROR_PENDING, I64), const_i64(1), "monotonic")
    for k, v in enumerate([const_i64(1), *fn.args]):
        b.store(v, slot_field(b, slot, k))
    b.ret_void()


def entry_slot(mt: ModuleTranslator) -> ir.Function:
    """`ptr adpasses_entry_slot()`, for entries, before the call: this
    thread's slot, made on the thread's first call (NULL if that allocation
    failed), with any stop left by an earlier call through `.address`
    cleared."""
    return runtime_function(mt, "adpasses_entry_slot")


def _define_entry_slot(mt: _RuntimeModule) -> None:
    fn = _define(mt, "adpasses_entry_slot")
    b = ir.IRBuilder(fn.append_basic_block())
    slot = own_slot(mt, b)  # type: ignore[arg-type]
    null = ir.Constant(PTR, None)
    make = fn.append_basic_block("make")
    have = fn.append_basic_block("have")
    b.cbranch(b.icmp_unsigned("==", slot, null), make, have)
    b.block.instructions[-1].set_weights([1, 1000])
    b.position_at_end(make)
    fresh_slot = b.call(mt.declare("calloc", PTR, [I64, I64]), [const_i64(1), const_i64(SLOT_BYTES)])
    failed = fn.append_basic_block("failed")
    register = fn.append_basic_block("register")
    b.cbranch(b.icmp_unsigned("==", fresh_slot, null), failed, register)
    b.position_at_end(register)
    key = b.trunc(b.load(mt.global_ref(ERROR_KEY, I64), typ=I64), I32)
    status = b.call(mt.declare("pthread_setspecific", I32, [I32, PTR]), [key, fresh_slot])
    registered = fn.append_basic_block("registered")
    unregistered = fn.append_basic_block("unregistered")
    b.cbranch(b.icmp_signed("==", status, ir.Constant(I32, 0)), registered, unregistered)
    b.position_at_end(unregistered)
    b.call(mt.declare("free", ir.VoidType(), [PTR]), [fresh_slot])
    b.branch(failed)
    b.position_at_end(failed)
    b.ret(null)
    b.position_at_end(registered)
    b.ret(fresh_slot)
    b.position_at_end(have)
    take_stop(mt, b, slot, None)  # type: ignore[arg-type]
    b.ret(slot)


def take_stop(mt: ModuleTranslator, b: ir.IRBuilder, slot: ir.Value, into: ir.Value | None) -> ir.Value:
    """Whether `slot` holds a stop; if so, copy site, index, axis, size
    into `into` ([4 x i64], unless None) and clear it (no longer pending)."""
    flag = slot_field(b, slot, 0)
    held = b.icmp_unsigned("!=", b.load(flag, typ=I64), const_i64(0))
    with b.if_then(held, likely=False):
        if into is not None:
            for k in range(4):
                value = b.load(slot_field(b, slot, k + 1), typ=I64)
                b.store(value, b.gep(into, [const_i64(0), const_i64(k)], inbounds=True,
                                     source_etype=ir.ArrayType(I64, 4)))
        b.store(const_i64(0), flag)
        b.atomic_rmw("sub", mt.global_ref(ERROR_PENDING, I64), const_i64(1), "monotonic")
    return held


# -- parallel loops (ad.parallel_for; adpasses.lowering.parallel) ----------------

NUM_THREADS = "adpasses_num_threads"
"""i64: the threads a parallel loop runs on (adpasses.set_num_threads)."""
MIN_WORK = "adpasses_parallel_min_work"
"""i64: the least estimated work (operations) per chunk of a parallel loop
(adpasses.lowering.parallel: fewer iterations run in fewer chunks, one
chunk on the calling thread alone)."""
SPIN_NS = "adpasses_parallel_spin_ns"
"""i64: how long (ns) a pool thread with nothing to do, and a loop waiting
for its other chunks, wait actively before sleeping on a condition
variable (adpasses.native.runtime.set_parallel_spin; 0: sleep at once)."""
POOL = "adpasses_parallel_pool"
"""The worker pool's state, [POOL_WORDS x i64] owned by
adpasses.native.runtime (a forked child zeroes it): the fields below,
then a pthread mutex and two condition variables (SYNC_WORDS each)."""
POOL_WORDS = 64
SYNC_WORDS = 16  # 128 bytes: more than glibc's (40, 48) and musl's mutex and cond
(POOL_BUSY, POOL_PID, POOL_STARTED, POOL_WORKER, POOL_RECORDS, POOL_SIZE, POOL_COUNT, POOL_NEXT,
 POOL_FINISHED, POOL_JOBS, POOL_SERIAL) = range(11)
"""Fields: busy (a parallel loop owns the pool: compare-and-swap), the pid
of the process whose workers these are (another pid: a forked child, whose
pool has no threads), workers started, the job (worker function, records,
record bytes, record count), the next record to claim, records finished,
and two counters: loops run on the pool, loops run serially because
another loop held it."""
POOL_MUTEX, POOL_WORK, POOL_DONE = 16, 32, 48  # word offsets of the pthread objects
MAX_WORKERS = 1023  # adpasses.core.parallel.MAX_THREADS - 1 (the caller runs chunks too)
_POOL_TYPE = ir.ArrayType(I64, POOL_WORDS)
_SIGSET_WORDS = 16  # sigset_t: 128 bytes (glibc, musl)


def _worker_type() -> ir.FunctionType:
    """`ptr worker(ptr record, i64 pooled)` (adpasses.lowering.parallel):
    pooled is 1 on a pool thread, 0 on the calling thread."""
    return ir.FunctionType(PTR, [PTR, I64])


class _Pool:
    """Builds code on the pool's state (the `adpasses_parallel_pool` words)."""

    def __init__(self, rm: _RuntimeModule, b: ir.IRBuilder):
        self.rm, self.b = rm, b
        self.state = rm.global_ref(POOL, _POOL_TYPE)

    def field(self, k: int) -> ir.Value:
        return opaque(self.b.gep(self.state, [const_i64(0), const_i64(k)], inbounds=True,
                                 source_etype=_POOL_TYPE))

    def load(self, k: int) -> ir.Value:
        return self.b.load(self.field(k), typ=I64)

    def store(self, k: int, value: ir.Value) -> None:
        self.b.store(value, self.field(k))

    def load_atomic(self, k: int) -> ir.Value:
        """Field k read without the lock (waiting actively; the lock is taken
        before anything it guards is used)."""
        return self.b.load_atomic(self.field(k), "monotonic", 8, typ=I64)

    def store_atomic(self, k: int, value: ir.Value) -> None:
        """Field k written under the lock, read by waiting threads without it
        (an exchange: llvmlite's store_atomic needs typed pointers)."""
        self.b.atomic_rmw("xchg", self.field(k), value, "monotonic")

    def lock(self) -> None:
        self.b.call(self.rm.declare("pthread_mutex_lock", I32, [PTR]), [self.field(POOL_MUTEX)])

    def unlock(self) -> None:
        self.b.call(self.rm.declare("pthread_mutex_unlock", I32, [PTR]), [self.field(POOL_MUTEX)])

    def wait(self, cond: int) -> None:
        self.b.call(self.rm.declare("pthread_cond_wait", I32, [PTR, PTR]),
                    [self.field(cond), self.field(POOL_MUTEX)])

    def signal(self, cond: int) -> None:
        self.b.call(self.rm.declare("pthread_cond_signal", I32, [PTR]), [self.field(cond)])

    def run_claimed(self, fn: ir.Function, pooled: int) -> None:
        """With the lock held: while a record of the job is unclaimed, claim
        it, run it unlocked, count it finished (signalling the caller when
        it is the last). Ends with the lock held and no record left."""
        b = self.b
        head = fn.append_basic_block(f"claim{pooled}.head")
        claim = fn.append_basic_block(f"claim{pooled}.run")
        done = fn.append_basic_block(f"claim{pooled}.done")
        b.branch(head)
        b.position_at_end(head)
        t = self.load(POOL_NEXT)
        count = self.load(POOL_COUNT)
        b.cbranch(b.icmp_signed("<", t, count), claim, done)
        b.position_at_end(claim)
        self.store(POOL_NEXT, b.add(t, const_i64(1)))
        worker = b.inttoptr(self.load(POOL_WORKER), _worker_type().as_pointer())
        records = b.inttoptr(self.load(POOL_RECORDS), PTR)
        record = b.gep(records, [b.mul(t, self.load(POOL_SIZE))], inbounds=True, source_etype=ir.IntType(8))
        self.unlock()
        b.call(worker, [record, const_i64(pooled)])
        self.lock()
        finished = b.add(self.load(POOL_FINISHED), const_i64(1))
        self.store_atomic(POOL_FINISHED, finished)  # read unlocked by the waiting caller
        with b.if_then(b.icmp_signed("==", finished, self.load(POOL_COUNT))):
            self.signal(POOL_DONE)
        b.branch(head)
        b.position_at_end(done)


_SPIN_CHECK = 16  # yields between two reads of the clock


def _spin(rm: _RuntimeModule, b: ir.IRBuilder, fn: ir.Function, timespec: ir.Value,
          ready: Callable[[], ir.Value], label: str) -> None:
    """Wait actively until `ready()` (an i1 built from unlocked atomic
    loads) or `adpasses_parallel_spin_ns` have passed (CLOCK_MONOTONIC,
    read every _SPIN_CHECK tries; 0 or less: no waiting). Waking a thread
    sleeping on a condition variable costs tens of microseconds on a
    virtual machine (an IPI to an idle vCPU): a worker that waits actively
    a while after its chunk finds the next loop's job at once, and so does
    a caller waiting for the last chunk. Each try yields the core
    (sched_yield): on an idle core it returns at once, so the wait reacts
    within a microsecond; on a busy machine the other threads run, the
    thread computing the awaited chunk included. (A `pause` loop there made
    a 2-chunk loop 2-18x slower at load average 10 on 2 cores: the spinning
    thread used up its share, and the scheduler ran the worker that held
    the awaited chunk late.) `timespec`: two i64 on the stack."""
    clock = rm.declare("clock_gettime", I32, [I32, PTR])
    budget = b.load(rm.global_ref(SPIN_NS, I64), typ=I64)
    head = fn.append_basic_block(f"{label}.head")
    body = fn.append_basic_block(f"{label}.body")
    check = fn.append_basic_block(f"{label}.clock")
    out = fn.append_basic_block(f"{label}.done")
    monotonic = ir.Constant(I32, int(getattr(time, "CLOCK_MONOTONIC", 1)))

    def now() -> ir.Value:
        b.call(clock, [monotonic, timespec])
        seconds = b.load(b.gep(timespec, [const_i64(0)], inbounds=True, source_etype=I64), typ=I64)
        nanos = b.load(b.gep(timespec, [const_i64(1)], inbounds=True, source_etype=I64), typ=I64)
        return b.add(b.mul(seconds, const_i64(1_000_000_000)), nanos)

    start_block = fn.append_basic_block(f"{label}.start")
    b.cbranch(b.icmp_signed(">", budget, const_i64(0)), start_block, out)
    b.position_at_end(start_block)
    start = now()
    pre = b.block
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(I64)
    k.add_incoming(const_i64(0), pre)
    b.cbranch(ready(), out, body)
    b.position_at_end(body)
    b.call(rm.declare("sched_yield", I32, []), [])
    k_next = b.add(k, const_i64(1))
    k.add_incoming(k_next, body)
    k.add_incoming(k_next, check)
    b.cbranch(b.icmp_unsigned("==", b.and_(k_next, const_i64(_SPIN_CHECK - 1)), const_i64(0)), check, head)
    b.position_at_end(check)
    b.cbranch(b.icmp_signed(">=", b.sub(now(), start), budget), out, head)
    b.position_at_end(out)


def _define_pool_thread(rm: _RuntimeModule) -> ir.Function:
    """`ptr adpasses_pool_thread(ptr)`: a worker of the pool, for the life
    of the process: it blocks every signal (Python's handlers run on the
    main thread; a signal must not interrupt a chunk), then waits on the
    work condition and runs the records it claims."""
    fn = ir.Function(rm.llvm, ir.FunctionType(PTR, [PTR]), "adpasses_pool_thread")
    fn.linkage = "internal"
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    mask = opaque(b.alloca(ir.ArrayType(I64, _SIGSET_WORDS)))
    timespec = opaque(b.alloca(ir.ArrayType(I64, 2)))
    b.call(rm.declare("sigfillset", I32, [PTR]), [mask])
    b.call(rm.declare("pthread_sigmask", I32, [I32, PTR, PTR]),
           [ir.Constant(I32, int(signal.SIG_BLOCK)), mask, ir.Constant(PTR, None)])
    pool = _Pool(rm, b)
    pool.lock()
    forever = fn.append_basic_block("forever")
    b.branch(forever)
    b.position_at_end(forever)
    pool.run_claimed(fn, 1)
    # Nothing left: wait actively a while for the next loop's job (a new
    # job count), then sleep. The count is checked again under the lock
    # before sleeping: a job posted after that check signals this wait.
    seen = pool.load(POOL_JOBS)
    pool.unlock()
    _spin(rm, b, fn, timespec, lambda: b.icmp_signed("!=", pool.load_atomic(POOL_JOBS), seen), "idle")
    pool.lock()
    with b.if_then(b.icmp_signed("==", pool.load(POOL_JOBS), seen)):
        pool.wait(POOL_WORK)
    b.branch(forever)
    return fn


def _define_parallel_run(rm: _RuntimeModule) -> None:
    """`adpasses_parallel_run(worker, records, record_bytes, count)`: run
    `worker(records + t * record_bytes, pooled)` for t = 0 .. count-1 and
    return once all have finished.

    The records go to a pool of worker threads made on the first parallel
    loop that needs them (pthread_create; more as the thread count grows),
    which then wait on a condition variable between loops. The calling
    thread claims records too, so a loop whose workers are slow to wake
    runs on the caller alone. One loop uses the pool at a time: a loop that
    finds it taken (another Python thread's, or a parallel loop called
    inside a chunk) runs its records on its own thread, in order, so no
    thread ever waits for a pool it holds. Which thread runs a record never
    changes what it computes (the chunks are fixed by the caller). The
    pool belongs to the process that made it: in a forked child (another
    pid) it is made again. A thread that cannot be created only costs
    parallelism."""
    fn = _define(rm, "adpasses_parallel_run")
    worker, records, size, count = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    pool = _Pool(rm, b)
    tid = opaque(b.alloca(I64))  # pthread_t
    timespec = opaque(b.alloca(ir.ArrayType(I64, 2)))
    run = b.inttoptr(b.ptrtoint(worker, I64), _worker_type().as_pointer())
    serial = fn.append_basic_block("serial")
    try_pool = fn.append_basic_block("try_pool")
    b.cbranch(b.icmp_signed(">", count, const_i64(1)), try_pool, serial)
    b.position_at_end(try_pool)
    taken = b.cmpxchg(pool.field(POOL_BUSY), const_i64(0), const_i64(1), "acquire", "monotonic")
    owned = fn.append_basic_block("owned")
    busy = fn.append_basic_block("busy")
    b.cbranch(b.extract_value(taken, 1), owned, busy)

    b.position_at_end(busy)
    b.atomic_rmw("add", pool.field(POOL_SERIAL), const_i64(1), "monotonic")
    b.branch(serial)

    b.position_at_end(serial)
    with counted_loop(b, count, "serial") as loop:
        record = b.gep(records, [b.mul(loop.index, size)], inbounds=True, source_etype=ir.IntType(8))
        b.call(run, [record, const_i64(0)])
    b.ret_void()

    b.position_at_end(owned)
    # A pool made by another process (we are a forked child): its threads
    # and the state of its mutex did not come with the fork. Make it again.
    pid = b.sext(b.call(rm.declare("getpid", I32, []), []), I64)
    with b.if_then(b.icmp_signed("!=", pool.load(POOL_PID), pid), likely=False):
        sync = pool.field(POOL_MUTEX)
        b.call(rm.declare("llvm.memset.p0.i64", ir.VoidType(), [PTR, ir.IntType(8), I64, I1]),
               [sync, ir.Constant(ir.IntType(8), 0), const_i64(8 * 3 * SYNC_WORDS), ir.Constant(I1, 0)])
        null = ir.Constant(PTR, None)
        b.call(rm.declare("pthread_mutex_init", I32, [PTR, PTR]), [sync, null])
        for cond in (POOL_WORK, POOL_DONE):
            b.call(rm.declare("pthread_cond_init", I32, [PTR, PTR]), [pool.field(cond), null])
        for k in (POOL_STARTED, POOL_COUNT, POOL_NEXT, POOL_FINISHED):
            pool.store(k, const_i64(0))
        pool.store(POOL_PID, pid)
    # Workers wanted: one per record but the caller's (the pool grows when
    # the thread count does; it never shrinks: idle workers only wait).
    wanted = b.sub(count, const_i64(1))
    wanted = b.select(b.icmp_signed(">", wanted, const_i64(MAX_WORKERS)), const_i64(MAX_WORKERS), wanted)
    grow_head = fn.append_basic_block("grow.head")
    grow = fn.append_basic_block("grow.body")
    made = fn.append_basic_block("grow.made")
    post = fn.append_basic_block("post")
    b.branch(grow_head)
    b.position_at_end(grow_head)
    started = pool.load(POOL_STARTED)
    b.cbranch(b.icmp_signed("<", started, wanted), grow, post)
    b.position_at_end(grow)
    thread_main = rm.llvm.globals.get("adpasses_pool_thread") or _define_pool_thread(rm)
    status = b.call(rm.declare("pthread_create", I32, [PTR, PTR, PTR, PTR]),
                    [tid, ir.Constant(PTR, None), thread_main, ir.Constant(PTR, None)])
    b.cbranch(b.icmp_signed("==", status, ir.Constant(I32, 0)), made, post)
    b.position_at_end(made)
    b.call(rm.declare("pthread_detach", I32, [I64]), [b.load(tid, typ=I64)])
    pool.store(POOL_STARTED, b.add(started, const_i64(1)))
    b.branch(grow_head)

    b.position_at_end(post)
    pool.lock()
    pool.store(POOL_WORKER, b.ptrtoint(worker, I64))
    pool.store(POOL_RECORDS, b.ptrtoint(records, I64))
    pool.store(POOL_SIZE, size)
    pool.store(POOL_NEXT, const_i64(0))
    pool.store_atomic(POOL_FINISHED, const_i64(0))
    pool.store(POOL_COUNT, count)
    pool.store_atomic(POOL_JOBS, b.add(pool.load(POOL_JOBS), const_i64(1)))  # waiting workers watch it
    # Wake as many workers as there are records besides the caller's.
    workers = pool.load(POOL_STARTED)
    wake = b.select(b.icmp_signed("<", workers, wanted), workers, wanted)
    with counted_loop(b, wake, "wake"):
        pool.signal(POOL_WORK)
    pool.run_claimed(fn, 0)
    # The other chunks are running: wait actively a while for them before
    # sleeping (a worker's signal wakes a sleeping caller tens of us late).
    spinning = fn.append_basic_block("spin.others")
    waiting = fn.append_basic_block("wait.start")
    b.cbranch(b.icmp_signed("<", pool.load(POOL_FINISHED), count), spinning, waiting)
    b.position_at_end(spinning)
    pool.unlock()
    _spin(rm, b, fn, timespec, lambda: b.icmp_signed(">=", pool.load_atomic(POOL_FINISHED), count), "others")
    pool.lock()
    b.branch(waiting)
    b.position_at_end(waiting)
    wait_head = fn.append_basic_block("wait.head")
    wait_body = fn.append_basic_block("wait.body")
    finished = fn.append_basic_block("wait.done")
    b.branch(wait_head)
    b.position_at_end(wait_head)
    b.cbranch(b.icmp_signed("<", pool.load(POOL_FINISHED), count), wait_body, finished)
    b.position_at_end(wait_body)
    pool.wait(POOL_DONE)
    b.branch(wait_head)
    b.position_at_end(finished)
    # No job: a worker woken late finds nothing to claim (the records are
    # on this thread's stack, gone once it returns).
    pool.store(POOL_COUNT, const_i64(0))
    pool.store(POOL_NEXT, const_i64(0))
    pool.unlock()
    b.atomic_rmw("xchg", pool.field(POOL_BUSY), const_i64(0), "release")
    b.ret_void()


# -- workspace pools -------------------------------------------------------------

HELD_TYPE = ir.LiteralStructType([PTR, I64])
"""A call's hold on a workspace buffer: {data, capacity in bytes}."""


def workspace_pool(mt: ModuleTranslator) -> tuple[ir.GlobalVariable, ir.GlobalVariable]:
    """A new tape site's pool: WORKSPACE_POOL buffer pointers (NULL: empty,
    1: being given back) and their capacities."""
    n = len(mt.llvm.globals)
    pointers = ir.GlobalVariable(mt.llvm, ir.ArrayType(PTR, WORKSPACE_POOL), f"__adpasses_workspace{n}")
    capacities = ir.GlobalVariable(mt.llvm, ir.ArrayType(I64, WORKSPACE_POOL), f"__adpasses_workspace{n}.cap")
    for g, t in ((pointers, PTR), (capacities, I64)):
        g.linkage = "internal"
        g.initializer = ir.Constant(g.value_type, [ir.Constant(t, None if t is PTR else 0)] * WORKSPACE_POOL)
    return pointers, capacities


def _entry_of(b: ir.IRBuilder, array: ir.Value, i: ir.Value, t: ir.Type) -> ir.Value:
    return b.gep(array, [const_i64(0), i], inbounds=True, source_etype=ir.ArrayType(t, WORKSPACE_POOL))


def _held_field(b: ir.IRBuilder, held: ir.Value, k: int) -> ir.Value:
    return b.gep(held, [const_i64(0), ir.Constant(I32, k)], inbounds=True, source_etype=HELD_TYPE)


def workspace_take(mt: ModuleTranslator) -> ir.Function:
    """`adpasses_workspace_take(pool, capacities, held)`: move a buffer of
    the pool into `held` ({NULL, 0} if the pool is empty)."""
    return runtime_function(mt, "adpasses_workspace_take")


def _define_workspace_take(mt: _RuntimeModule) -> None:
    fn = _define(mt, "adpasses_workspace_take")
    pool, capacities, held = fn.args
    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    try_take = fn.append_basic_block("try")
    next_bb = fn.append_basic_block("next")
    taken = fn.append_basic_block("taken")
    empty = fn.append_basic_block("empty")
    b = ir.IRBuilder(entry)
    b.branch(loop)
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(const_i64(0), entry)
    cell = _entry_of(b, pool, i, PTR)
    p = b.load_atomic(cell, "acquire", 8, typ=PTR)
    usable = b.icmp_unsigned(">", b.ptrtoint(p, I64), const_i64(_BUSY))
    b.cbranch(usable, try_take, next_bb)
    b.position_at_end(try_take)
    swapped = b.cmpxchg(cell, p, ir.Constant(PTR, None), "acq_rel", "monotonic")
    b.cbranch(b.extract_value(swapped, 1), taken, next_bb)
    b.position_at_end(next_bb)
    i_next = b.add(i, const_i64(1))
    i.add_incoming(i_next, next_bb)
    b.cbranch(b.icmp_unsigned("<", i_next, const_i64(WORKSPACE_POOL)), loop, empty)
    b.position_at_end(taken)
    # The capacity is read after the buffer is ours: whoever gave it back
    # wrote it before publishing the pointer (release / acquire).
    b.store(p, _held_field(b, held, 0))
    b.store(b.load(_entry_of(b, capacities, i, I64), typ=I64), _held_field(b, held, 1))
    b.ret_void()
    b.position_at_end(empty)
    b.store(ir.Constant(PTR, None), _held_field(b, held, 0))
    b.store(const_i64(0), _held_field(b, held, 1))
    b.ret_void()


def workspace_give_back(mt: ModuleTranslator) -> ir.Function:
    """`adpasses_workspace_give_back(pool, capacities, held)`: put the
    buffer in `held` (if any) into an empty pool entry, or free it when the
    pool is full; `held` becomes {NULL, 0}."""
    return runtime_function(mt, "adpasses_workspace_give_back")


def _define_workspace_give_back(mt: _RuntimeModule) -> None:
    fn = _define(mt, "adpasses_workspace_give_back")
    pool, capacities, held = fn.args
    entry = fn.append_basic_block("entry")
    loop = fn.append_basic_block("loop")
    try_claim = fn.append_basic_block("try")
    next_bb = fn.append_basic_block("next")
    claimed = fn.append_basic_block("claimed")
    full = fn.append_basic_block("full")
    nothing = fn.append_basic_block("nothing")
    b = ir.IRBuilder(entry)
    p = b.load(_held_field(b, held, 0), typ=PTR)
    capacity = b.load(_held_field(b, held, 1), typ=I64)
    b.store(ir.Constant(PTR, None), _held_field(b, held, 0))
    b.store(const_i64(0), _held_field(b, held, 1))
    b.cbranch(b.icmp_unsigned("==", p, ir.Constant(PTR, None)), nothing, loop)
    b.position_at_end(nothing)
    b.ret_void()
    b.position_at_end(loop)
    i = b.phi(I64)
    i.add_incoming(const_i64(0), entry)
    cell = _entry_of(b, pool, i, PTR)
    current = b.load_atomic(cell, "monotonic", 8, typ=PTR)
    b.cbranch(b.icmp_unsigned("==", current, ir.Constant(PTR, None)), try_claim, next_bb)
    b.position_at_end(try_claim)
    busy = b.inttoptr(const_i64(_BUSY), PTR)
    swapped = b.cmpxchg(cell, ir.Constant(PTR, None), busy, "acq_rel", "monotonic")
    b.cbranch(b.extract_value(swapped, 1), claimed, next_bb)
    b.position_at_end(next_bb)
    i_next = b.add(i, const_i64(1))
    i.add_incoming(i_next, next_bb)
    b.cbranch(b.icmp_unsigned("<", i_next, const_i64(WORKSPACE_POOL)), loop, full)
    b.position_at_end(claimed)
    b.store(capacity, _entry_of(b, capacities, i, I64))
    b.atomic_rmw("xchg", cell, p, "release")  # (store_atomic: llvmlite wants a typed pointer)
    b.ret_void()
    b.position_at_end(full)
    b.call(mt.declare("free", ir.VoidType(), [PTR]), [p])
    b.ret_void()
