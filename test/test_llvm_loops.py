"""core/llvm_loops.counted_loop: the one counted loop the lowering (runtime
serial fallback, parallel loop bookkeeping) and the dispatch builtins emit.
Compiled and run: trip counts (zero, negative, from a start), carried
values, nesting, and the misuse errors."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from llvmlite import ir

from adpasses.core.llvm_loops import counted_loop
from adpasses.native.llvm_jit import _machine_code

I64 = ir.IntType(64)
F64 = ir.DoubleType()


def _run(module: ir.Module, name: str, restype, argtypes, *args):  # type: ignore[no-untyped-def]
    code, _, _ = _machine_code(str(module), 2)
    fn = ctypes.CFUNCTYPE(restype, *argtypes)(code.address(name))
    return fn(*args), code  # keep the code alive beside the result


def _sum_module() -> ir.Module:
    """`double f(double* x, i64 start, i64 stop)`: sum of x[t] * t for t in
    [start, stop), and the count of iterations added into the sum * 1e6."""
    module = ir.Module("loops")
    fn = ir.Function(module, ir.FunctionType(F64, [ir.PointerType(), I64, I64]), "f")
    x, start, stop = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with counted_loop(b, stop, "sum", start=start, carried=[ir.Constant(F64, 0.0), ir.Constant(I64, 0)]) as loop:
        t = loop.index
        acc, count = loop.carried
        xt = b.load(b.gep(x, [t], source_etype=F64), typ=F64)
        loop.next([b.fadd(acc, b.fmul(xt, b.sitofp(t, F64))), b.add(count, ir.Constant(I64, 1))])
    acc, count = loop.carried
    b.ret(b.fadd(acc, b.fmul(b.sitofp(count, F64), ir.Constant(F64, 1e6))))
    return module


@pytest.mark.parametrize("start, stop", [(0, 7), (3, 7), (0, 0), (5, 2), (-4, 3), (6, 7)])
def test_carried_sum_matches_python(start: int, stop: int) -> None:
    rng = np.random.default_rng((start + 10) * 31 + stop)
    x = rng.standard_normal(8)
    buf = np.concatenate([rng.standard_normal(4), x])  # x[t] for t >= -4
    ptr = buf.ctypes.data + 4 * 8
    got, _ = _run(_sum_module(), "f", ctypes.c_double, [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64],
                  ptr, start, stop)
    ts = range(start, stop)
    want = sum(buf[4 + t] * t for t in ts) + 1e6 * len(ts)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_nested_loops_count_pairs() -> None:
    """for i < n: for j < i: count += 1 (through memory), so n(n-1)/2."""
    module = ir.Module("nested")
    fn = ir.Function(module, ir.FunctionType(I64, [I64]), "pairs")
    (n,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    slot = b.alloca(I64)
    b.store(ir.Constant(I64, 0), slot)
    with counted_loop(b, n, "outer") as outer:
        with counted_loop(b, outer.index, "inner"):
            b.store(b.add(b.load(slot, typ=I64), ir.Constant(I64, 1)), slot)
    b.ret(b.load(slot, typ=I64))
    names = [bb.name for bb in fn.blocks]
    assert names == ["entry", "outer.head", "outer.body", "outer.done", "inner.head", "inner.body", "inner.done"]
    for value in (0, 1, 2, 9):
        got, _ = _run(module, "pairs", ctypes.c_int64, [ctypes.c_int64], value)
        assert got == value * (value - 1) // 2


def test_carried_without_next_is_an_error() -> None:
    module = ir.Module("bad")
    fn = ir.Function(module, ir.FunctionType(I64, [I64]), "g")
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    with pytest.raises(ValueError, match="carried values but no next"):
        with counted_loop(b, fn.args[0], "bad", carried=[ir.Constant(I64, 0)]):
            pass
    with pytest.raises(ValueError, match="2 next values for 1 carried"):
        with counted_loop(b, fn.args[0], "bad2", carried=[ir.Constant(I64, 0)]) as loop:
            loop.next([ir.Constant(I64, 1), ir.Constant(I64, 2)])
