"""`-2**63 // -1` (and `%`) in compiled code: the quotient overflows int64,
and x86's idiv traps on it (SIGFPE): the interpreter died. Ints wrap in
compiled code (docs/frontend.md, "Differences from Python"), as numpy's
int64 does: the quotient is -2**63 again and the remainder 0. The
lowering divides by 1 and negates when the divisor is -1
(`adpasses/lowering/arith.py`, `_signed_divisor`); run in a fresh process
so that a regression fails the test instead of killing the run."""

from __future__ import annotations

from isolate import run_isolated


def test_most_negative_int_by_minus_one_wraps_instead_of_trapping() -> None:
    r = run_isolated("""
        import numpy as np, adpasses
        import division_kernels as K
        m = -2**63
        print(adpasses.jit(K.floordiv)(m, -1), adpasses.jit(K.mod)(m, -1))
        print(adpasses.jit(K.floordiv)(7, -1), adpasses.jit(K.mod)(-7, -1), adpasses.jit(K.floordiv)(-7, 2))
        x = np.array([m, 7, -7, m], dtype=np.int64)
        y = np.array([-1, -1, 2, 3], dtype=np.int64)
        with np.errstate(over="ignore"):
            want = int(np.sum(x // y) + np.sum(x % y))
        print(adpasses.jit(K.both_arrays)(x, y) == want)
        with np.errstate(over="ignore"):
            print(adpasses.jit(K.elements)(x, y) == int(np.sum(x // y - x % y)))
        x32 = np.array([-2**31, 5], dtype=np.int32)
        y32 = np.array([-1, -1], dtype=np.int32)
        with np.errstate(over="ignore"):
            print(adpasses.jit(K.elements)(x32, y32) == K.elements(x32, y32))   # np.int32 wraps
        print(adpasses.jit(K.by_minus_one_literal)(m), adpasses.jit(K.by_minus_one_literal)(5))
        print(adpasses.jit(K.floordiv)(1, 0))
    """)
    assert not r.crashed, str(r)
    lines = r.stdout.splitlines()
    assert lines[:6] == [f"{-2**63} 0", "-7 0 -4", "True", "True", "True", f"{-2**63} -5"], str(r)
    assert "ZeroDivisionError: integer division or modulo by zero" in r.stderr, str(r)
