"""Deep nesting and long code (issue 13, items 3 and 12): what Python or
MLIR accepts compiles, with the right values and gradients; nothing
overflows a stack. Compilation runs on a thread with a large stack and a
raised recursion limit (`adpasses.core.compile_thread`); LLVM gets a stack sized
to its IR, or compiles at O0 when none can be had.

Before: a 400-term expression raised RecursionError inside the frontend, 300
nested loops in MLIR RecursionError, and a 50,000-op straight-line function
killed the process inside LLVM's optimiser (C stack overflow). Every case
runs in a fresh process: a regression is a crash.
"""

from __future__ import annotations

import textwrap

import pytest

from isolate import run_isolated, run_tool


def _ok(code: str, cwd: str, timeout: float = 300) -> str:
    r = run_isolated(code, cwd=cwd, timeout=timeout)
    assert not r.crashed and r.returncode == 0, str(r)
    return r.stdout


def _write(path, text: str) -> str:  # type: ignore[no-untyped-def]
    path.write_text(text)
    return str(path)


# -- Python: long expressions, deep loops and ifs ----------------------------------------


def _sum_module(n: int) -> str:
    """f(x) = sum_k x[k % 7] * k in one return expression of n terms."""
    terms = " + ".join(f"x[{k % 7}] * {k}.0" for k in range(n))
    return f"def f(x):\n    return {terms}\n"


@pytest.mark.parametrize("n", [400, 2900])
def test_long_expression_value_and_gradient(tmp_path, n: int) -> None:
    """400 terms (r18) and 2900 (about the most CPython itself compiles at
    its default recursion limit): value and gradient exact, the user's
    recursion limit unchanged afterwards."""
    _write(tmp_path / "longexpr.py", _sum_module(n))
    out = _ok(f"""
        import sys
        import numpy as np, adpasses, longexpr
        rng = np.random.default_rng(0)
        x = rng.normal(size=7)
        v = adpasses.jit(longexpr.f)(x)
        g = adpasses.grad(longexpr.f)(x)
        k = np.arange({n})
        assert abs(v - float(np.sum(x[k % 7] * k))) <= 1e-9 * abs(v), v
        want = np.array([k[k % 7 == j].sum() for j in range(7)], dtype=float)
        assert np.array_equal(g, want), (g, want)
        print("ok", sys.getrecursionlimit())
    """, str(tmp_path))
    assert out.split() == ["ok", "1000"]


def _nested_loops_module(depth: int) -> str:
    """s accumulates x[0]*x[1] + x[2] once, inside `depth` nested loops of
    one iteration each (CPython compiles at most 20 nested loops)."""
    lines = ["def f(x):", "    s = 0.0"]
    for d in range(depth):
        lines.append("    " * (d + 1) + f"for i{d} in range(1):")
    lines.append("    " * (depth + 1) + "s += x[0] * x[1] + x[2]")
    lines.append("    return s")
    return "\n".join(lines) + "\n"


def _nested_ifs_module(depth: int) -> str:
    """`depth` nested ifs on x[0] > -k; the innermost returns x0^2 x1."""
    lines = ["def f(x):", "    s = 1.0"]
    for d in range(depth):
        lines.append("    " * (d + 1) + f"if x[0] > -{d + 1}.0:")
    lines.append("    " * (depth + 1) + "s = x[0] * x[0] * x[1]")
    lines.append("    return s")
    return "\n".join(lines) + "\n"


def test_deeply_nested_python_loops_and_ifs(tmp_path) -> None:
    """20 nested for loops and 95 nested ifs (the most CPython accepts:
    20 nested loops, 100 levels of indentation): gradients against the hand
    derivation on random inputs."""
    _write(tmp_path / "deeploops.py", _nested_loops_module(20))
    _write(tmp_path / "deepifs.py", _nested_ifs_module(95))
    out = _ok("""
        import numpy as np, adpasses, deeploops, deepifs
        rng = np.random.default_rng(1)
        x = rng.uniform(0.5, 1.5, size=3)
        g = adpasses.grad(deeploops.f)(x)
        assert np.allclose(g, [x[1], x[0], 1.0], rtol=1e-14), g
        v, g = adpasses.value_and_grad(deepifs.f)(x)
        assert np.isclose(v, x[0] ** 2 * x[1], rtol=1e-14), v
        assert np.allclose(g, [2 * x[0] * x[1], x[0] ** 2, 0.0], rtol=1e-14), g
        print("ok")
    """, str(tmp_path))
    assert out.strip() == "ok"


# -- MLIR: 300 nested loops, 1000 nested ifs -------------------------------------------


def _mlir_nest(depth: int, kind: str) -> str:
    """@f(x) = x[0]^2 computed inside `depth` nested scf.for (one trip
    each) or scf.if (always taken), and a @main that prints d f / d x[0]
    at x[0] = 3 (= 6)."""
    lines = ["func.func @f(%x: memref<?xf64>) -> f64 {", "  %c0 = arith.constant 0 : index",
             "  %c1 = arith.constant 1 : index", "  %z = arith.constant 0.0 : f64",
             "  %v = memref.load %x[%c0] : memref<?xf64>"]
    if kind == "for":
        for d in range(depth):
            init = "%z" if d == 0 else f"%a{d - 1}"
            lines.append(f"  %r{d} = scf.for %i{d} = %c0 to %c1 step %c1 "
                         f"iter_args(%a{d} = {init}) -> (f64) {{")
        lines += ["  %w = arith.mulf %v, %v : f64", f"  %t = arith.addf %a{depth - 1}, %w : f64",
                  "  scf.yield %t : f64"]
        for d in reversed(range(depth)):
            lines.append("  }")
            if d > 0:
                lines.append(f"  scf.yield %r{d} : f64")
    else:
        lines += ["  %m = arith.constant -1.0 : f64", "  %c = arith.cmpf ogt, %v, %m : f64"]
        for d in range(depth):
            lines.append(f"  %r{d} = scf.if %c -> (f64) {{")
        lines += ["  %w = arith.mulf %v, %v : f64", "  scf.yield %w : f64"]
        for d in reversed(range(depth)):
            lines += ["  } else {", "  scf.yield %z : f64", "  }"]
            if d > 0:
                lines.append(f"  scf.yield %r{d} : f64")
    lines += ["  func.return %r0 : f64", "}"]
    lines += textwrap.dedent("""\
        func.func @main() {
          %c0 = arith.constant 0 : index
          %c1 = arith.constant 1 : index
          %three = arith.constant 3.0 : f64
          %one = arith.constant 1.0 : f64
          %zero = arith.constant 0.0 : f64
          %x = memref.alloc(%c1) : memref<?xf64>
          %dx = memref.alloc(%c1) : memref<?xf64>
          memref.store %three, %x[%c0] : memref<?xf64>
          memref.store %zero, %dx[%c0] : memref<?xf64>
          ad.autodiff @f(%x, %dx, %one) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
          %d = memref.load %dx[%c0] : memref<?xf64>
          printf.print_format "d = {}\\n", %d : f64
          func.return
        }""").splitlines()
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("depth, kind", [(100, "for"), (300, "if")])
def test_ad_run_deep_mlir_nest_gradient(tmp_path, depth: int, kind: str) -> None:
    path = _write(tmp_path / f"nest_{kind}{depth}.mlir", _mlir_nest(depth, kind))
    r = run_tool("ad-run", path, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "d = 6", str(r)


@pytest.mark.parametrize("depth, kind", [(300, "for"), (1000, "if")])
def test_ad_opt_reverse_deep_mlir_nest(tmp_path, depth: int, kind: str) -> None:
    """Parse, verify, differentiate, simplify, print and lower (r13/091:
    RecursionError before). LLVM's loop optimisations on 300 nested loops
    take tens of seconds, so the LLVM IR is emitted unoptimised."""
    path = _write(tmp_path / f"nest_{kind}{depth}.mlir", _mlir_nest(depth, kind))
    r = run_tool("ad-opt", "--reverse", path, timeout=300)
    assert r.returncode == 0, str(r)
    # A gradient function replaced the ad.autodiff (canonicalize flattens
    # its one-trip loops and always-taken branches).
    assert r.stdout.count("func.func") == 3 and "ad.autodiff" not in r.stdout, r.stdout[-2000:]
    r = run_tool("ad-opt", "--reverse", "--emit=llvm-ir", path, timeout=300)
    assert r.returncode == 0 and "define" in r.stdout, str(r)[:2000]


def test_beyond_the_recursion_limit_is_a_diagnostic(tmp_path) -> None:
    """Input deeper than the compile thread's recursion limit is one line
    saying what to do, not a RecursionError (the limit is lowered here so
    that the test stays small)."""
    path = _write(tmp_path / "nest.mlir", _mlir_nest(300, "if"))
    src = _write(tmp_path / "longexpr.py", _sum_module(1500))
    out = _ok(f"""
        import sys
        import adpasses.core.compile_thread as ct
        ct.RECURSION_LIMIT = 1500
        from adpasses.tools import ad_opt
        print("exit", ad_opt.main([{path!r}]))
        import numpy as np, adpasses, longexpr
        try:
            adpasses.jit(longexpr.f)(np.ones(7))
        except adpasses.CompileError as e:
            print("python:", str(e).splitlines()[0])
    """, str(tmp_path))
    lines = out.splitlines()
    assert lines[0] == "exit 1", out
    assert lines[1].startswith(f"python: {src}:2:"), out
    assert "nested too deeply to compile" in lines[1] and "split long expressions" in lines[1], out
    r = run_isolated(f"""
        import adpasses.core.compile_thread as ct
        ct.RECURSION_LIMIT = 1500
        from adpasses.tools import ad_opt
        ad_opt.main([{path!r}])
    """, cwd=str(tmp_path))
    assert r.returncode == 0 and r.stderr.count("\n") == 1, str(r)
    assert r.stderr.startswith("error: this is nested too deeply to compile"), str(r)


# -- LLVM: long straight-line code -------------------------------------------------------


def _chain_ir(n: int) -> str:
    """A chain of n dependent fadd/fmul and a caller with a constant
    argument: after inlining, LLVM constant-folds the chain recursively."""
    lines = ['define double @"chain"(double %"x") {', "entry:"]
    prev = '%"x"'
    for k in range(n):
        lines.append(f'  %"v{k}" = {"fmul" if k % 2 else "fadd"} double {prev}, 0x3ff000010c6f7a0b')
        prev = f'%"v{k}"'
    lines += [f"  ret double {prev}", "}", 'define double @"main"() {', "entry:",
              '  %"r" = call double @"chain"(double 0x3fe0000000000000)', '  ret double %"r"', "}"]
    return "\n".join(lines) + "\n"


def test_llvm_optimiser_on_a_long_chain(tmp_path) -> None:
    """r10's crash, in LLVM alone: 100,000 chained ops overflowed a 16 MB
    stack in the optimiser (50,000 the 8 MB main stack)."""
    _write(tmp_path / "chain.ll", _chain_ir(100_000))
    out = _ok("""
        from adpasses.native.llvm_jit import optimized_module
        mod = optimized_module(open("chain.ll").read())
        fn = mod.get_function("main")
        print("ok", sum(1 for b in fn.blocks for i in b.instructions))
    """, str(tmp_path))
    # Folded to a constant: one instruction (ret).
    assert out.split() == ["ok", "1"], out


def test_ad_run_long_straight_line_function(tmp_path) -> None:
    """r10_gen_long_chain.py with 50,000 ops: segfaulted, now prints the
    value (checked against Python's own evaluation of the chain)."""
    n = 50_000
    lines = ["func.func @chain(%x: f64) -> f64 {", "  %c = arith.constant 1.000001 : f64"]
    prev = "%x"
    for k in range(n):
        lines.append(f"  %v{k} = arith.{'mulf' if k % 2 else 'addf'} {prev}, %c : f64")
        prev = f"%v{k}"
    lines += [f"  func.return {prev} : f64", "}", "func.func @main() {",
              "  %a = arith.constant 0.5 : f64", "  %r = func.call @chain(%a) : (f64) -> f64",
              '  printf.print_format "r = {}\\n", %r : f64', "  func.return", "}"]
    path = _write(tmp_path / "chain.mlir", "\n".join(lines) + "\n")
    r = run_tool("ad-run", path, timeout=600)
    assert r.returncode == 0, str(r)
    v, c = 0.5, 1.000001
    for k in range(n):
        v = v * c if k % 2 else v + c
    assert r.stdout.strip() == f"r = {v:g}", (r.stdout, v)


def test_llvm_falls_back_to_O0_without_a_large_enough_stack(tmp_path) -> None:
    """When no thread with the stack LLVM's optimiser needs can be started,
    the module compiles at O0 with a RuntimeWarning (a stack overflow would
    kill the process); the code still computes the right value."""
    out = _ok("""
        import warnings
        import adpasses.native.llvm_jit as J
        J.LLVM_STACK_PER_LINE = 1 << 40  # every module "needs" more than any stack
        text = '''
        func.func @f(%x: f64) -> f64 {
          %y = arith.mulf %x, %x : f64
          %z = math.sin %y : f64
          func.return %z : f64
        }
        '''
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f = J.compile_module(text)["f"]
        import math
        assert f(0.7) == math.sin(0.7 * 0.7), f(0.7)
        print(len(caught), caught[0].category.__name__, "(O0)" in str(caught[0].message))
    """, str(tmp_path))
    assert out.split() == ["1", "RuntimeWarning", "True"], out


# -- the compile thread itself -----------------------------------------------------------


def test_compile_thread_keeps_the_users_recursion_limit_and_errors(tmp_path) -> None:
    """The raised limit lasts only while something compiles; a user's
    higher limit stays; errors reach the caller with their type; compiles
    from several user threads at once all succeed."""
    out = _ok("""
        import sys, threading
        import numpy as np, adpasses
        from adpasses.native.llvm_jit import compile_module

        def source(k):
            return f"func.func @f(%x: f64) -> f64 {{\\n  %c = arith.constant {k}.0 : f64\\n" \\
                   f"  %y = arith.mulf %x, %c : f64\\n  func.return %y : f64\\n}}\\n"

        sys.setrecursionlimit(1234)
        assert compile_module(source(2))["f"](1.5) == 3.0
        print(sys.getrecursionlimit())
        sys.setrecursionlimit(300000)
        compile_module(source(3))
        print(sys.getrecursionlimit())
        sys.setrecursionlimit(1000)
        try:
            compile_module("func.func @f(%x: f64) -> f64 {\\n  func.return %y : f64\\n}\\n")
        except adpasses.CompileError as e:
            print("CompileError", str(e).split(":")[0])
        results = {}
        def work(k):
            results[k] = compile_module(source(k + 10))["f"](2.0)
        threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
        for t in threads: t.start()
        for t in threads: t.join()
        print(sorted(results.values()), sys.getrecursionlimit())
    """, str(tmp_path))
    assert out.splitlines() == ["1234", "300000", "CompileError <compile_module>",
                                "[20.0, 22.0, 24.0, 26.0, 28.0, 30.0] 1000"], out


def test_fork_while_another_thread_compiles(tmp_path) -> None:
    """The child of a fork made while another thread compiles has the
    user's recursion limit back and compiles (the compile thread's locks
    are new in the child; the other thread's compilation did not survive)."""
    out = _ok("""
        import os, sys, threading
        import adpasses.core.compile_thread as ct
        started, release = threading.Event(), threading.Event()
        def compiling():
            started.set()
            release.wait()
        t = threading.Thread(target=lambda: ct.run_with_stack(compiling))
        t.start()
        started.wait()
        print("during", sys.getrecursionlimit())
        pid = os.fork()
        if pid == 0:
            from adpasses.native.llvm_jit import compile_module
            before = sys.getrecursionlimit()
            f = compile_module("func.func @f(%x: f64) -> f64 {\\n  %y = arith.mulf %x, %x : f64\\n"
                               "  func.return %y : f64\\n}\\n")["f"]
            os._exit(0 if (before, f(3.0), sys.getrecursionlimit()) == (1000, 9.0, 1000) else 3)
        _, status = os.waitpid(pid, 0)
        release.set()
        t.join()
        print("child", os.waitstatus_to_exitcode(status), "after", sys.getrecursionlimit())
    """, str(tmp_path), timeout=120)
    assert out.splitlines() == ["during 100000", "child 0 after 1000"], out
