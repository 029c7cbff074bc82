"""Names (issue 13, item 6): no user symbol clashes with a C library,
CPython, runtime or internal name.

A function named like the libm function its body calls used to call itself
(`atan(0.6)` returned 0.6; the exp2 gradient never returned), and one named
like a runtime symbol (`malloc`, `adpasses_error_slot`, `__py_entry_main`)
broke the module with an internal error. User definitions are `u.<name>`
in LLVM (adpasses/lowering/names.py), everywhere: ad-opt --emit=llvm-ir,
ad-run, compile_module (both bindings) and @jit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from isolate import run_isolated, run_tool

import adpasses
from adpasses.core.diagnostics import CompileError
from adpasses.native.llvm_jit import compile_module
from finite_diff import assert_matches, finite_differences

# Names the generated code (or the process) uses: libm (directly and for
# LLVM intrinsics), libc, CPython's C API, the runtime, internal helpers.
CLASHING = ["atan", "exp2", "log1p", "log2", "exp", "sqrt", "pow", "tanh", "malloc", "free",
            "realloc", "printf", "fflush", "puts", "PyFloat_AsDouble", "PyLong_AsLongLong",
            "Py_BuildValue", "PyErr_Occurred", "adpasses_error_slot", "adpasses_alloc_stats",
            "__adpasses_oob", "__adpasses_alloc", "__adpasses_realloc", "__adpasses_powi_f64_64",
            "__py_entry_main", "__py_entry_f", "__c_entry_f", "__truncdfhf2"]

FUNCTION = """func.func @"{name}"(%x: f64, %y: memref<?xf64>, %n: i64) -> f64 {{
  %c0 = arith.constant 0 : index
  %a = math.atan %x : f64
  %b = math.exp2 %x : f64
  %c = math.log1p %x : f64
  %d = math.log2 %x : f64
  %e = math.tanh %x : f64
  %p = math.fpowi %x, %n : f64, i64
  %s = math.sqrt %x : f64
  %m = memref.alloc(%c0) : memref<?xf64>
  memref.dealloc %m : memref<?xf64>
  %y0 = memref.load %y[%c0] : memref<?xf64>
  %r1 = arith.addf %a, %b : f64
  %r2 = arith.addf %r1, %c : f64
  %r3 = arith.addf %r2, %d : f64
  %r4 = arith.addf %r3, %e : f64
  %r5 = arith.addf %r4, %p : f64
  %r6 = arith.addf %r5, %s : f64
  %r = arith.mulf %r6, %y0 : f64
  func.return %r : f64
}}
"""


def _expected(x: float, y0: float, n: int) -> float:
    return (math.atan(x) + 2.0 ** x + math.log1p(x) + math.log2(x) + math.tanh(x) + x ** n
            + math.sqrt(x)) * y0


@pytest.mark.parametrize("binding", ["shim", "ctypes"])
def test_compile_module_with_clashing_names(binding: str) -> None:
    """Every clashing name in one module, each computing through libm:
    the values are Python's, for either binding."""
    text = "\n".join(FUNCTION.format(name=n) for n in CLASHING)
    m = compile_module(text, binding=binding)
    y = np.array([1.5])
    for name in CLASHING:
        for x, n in [(0.6, 3), (2.5, 70)]:
            assert m[name](x, y, n) == pytest.approx(_expected(x, 1.5, n), rel=1e-13), name
    assert len({m.address(n) for n in CLASHING}) == len(CLASHING)


GRADIENT = """func.func @exp2(%x: f64) -> f64 {
  %y = math.exp2 %x : f64
  return %y : f64
}
func.func @atan(%x: f64) -> f64 {
  %y = math.atan %x : f64
  %z = func.call @exp2(%y) : (f64) -> f64
  return %z : f64
}
func.func @main() {
  %x = arith.constant 0.6 : f64
  %one = arith.constant 1.0 : f64
  %v = func.call @atan(%x) : (f64) -> f64
  %d = ad.autodiff @atan(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  %e = ad.autodiff @exp2(%x, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  printf.print_format "{} {} {}\\n", %v : f64, %d : f64, %e : f64
  return
}
"""


def test_gradients_of_clashing_names(tmp_path) -> None:
    """The gradient of @exp2 called libm exp2 = itself and never returned
    (ad-run runs in its own process, with a timeout)."""
    path = tmp_path / "grad.mlir"
    path.write_text(GRADIENT)
    r = run_tool("ad-run", str(path), timeout=60)
    assert r.returncode == 0, str(r)
    value, d_atan, d_exp2 = (float(v) for v in r.stdout.split())
    x = 0.6
    assert value == pytest.approx(2.0 ** math.atan(x), rel=1e-5)
    assert d_atan == pytest.approx(math.log(2) * 2.0 ** math.atan(x) / (1 + x * x), rel=1e-5)
    assert d_exp2 == pytest.approx(math.log(2) * 2.0 ** x, rel=1e-5)


def test_jit_functions_with_clashing_names_in_a_fresh_process() -> None:
    r = run_isolated("""
        import math, numpy as np, adpasses
        import gencode_names as N
        from finite_diff import assert_matches, finite_differences
        x = 0.6
        assert N.atan(x) == math.atan(x)
        assert N.exp2(x) == math.exp2(x)
        assert abs(adpasses.grad(N.exp2)(x) - math.log(2) * 2 ** x) < 1e-12
        assert N.log1p(x) == math.log1p(x) and N.log2(x) == math.log2(x) and N.tanh(x) == math.tanh(x)
        assert N.malloc(3) == 4.5 and N.free(4) == 4.0
        assert N.printf(1.0) == 2.0 and N.PyFloat_AsDouble(2.0) == 4.0
        assert N.__adpasses_oob(np.arange(3.0), 2) == 2.0
        assert N.adpasses_error_slot(np.array([2.0, 3.0])) == 6.0
        assert N.uses_them(0.5) == math.atan(0.5) + math.log1p(0.5) + math.tanh(0.5) + 1.5 + 1.0
        g = adpasses.grad(N.uses_them)(0.5)
        assert_matches(g, finite_differences(N.uses_them.py_func, [0.5], [0])[0])
        try:
            N.__adpasses_oob(np.arange(3.0), 5)
        except IndexError as e:
            assert "gencode_names.py" in str(e), e
        print("ok")
    """, timeout=120)
    assert not r.crashed and r.returncode == 0, str(r)
    assert r.stdout.strip() == "ok"


@pytest.mark.parametrize("name", ["atan", "malloc", "adpasses_error_slot", "__py_entry_main", "printf"])
def test_ad_run_with_clashing_names(tmp_path, name: str) -> None:
    """r13 cases 190 and mlir/libm_name_clash*: the printed value is right."""
    path = tmp_path / "clash.mlir"
    path.write_text(FUNCTION.format(name=name) + f"""
func.func @main() {{
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %x = arith.constant 0.6 : f64
  %n = arith.constant 3 : i64
  %y0 = arith.constant 2.0 : f64
  %y = memref.alloc(%c1) : memref<?xf64>
  memref.store %y0, %y[%c0] : memref<?xf64>
  %r = func.call @"{name}"(%x, %y, %n) : (f64, memref<?xf64>, i64) -> f64
  printf.print_format "{{}}\\n", %r : f64
  memref.dealloc %y : memref<?xf64>
  func.return
}}
""")
    r = run_tool("ad-run", str(path), timeout=60)
    assert r.returncode == 0, str(r)
    assert float(r.stdout) == pytest.approx(_expected(0.6, 2.0, 3), rel=1e-5)  # printf's %g


def test_memref_globals_named_like_c_symbols() -> None:
    text = """"memref.global"() <{sym_name = "malloc", sym_visibility = "private", type = memref<2xf64>, initial_value = dense<[1.0, 2.0]> : tensor<2xf64>, constant}> : () -> ()
"memref.global"() <{sym_name = "adpasses_error_slot", sym_visibility = "public", type = memref<1xf64>, initial_value = unit}> : () -> ()
func.func @f(%x: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %g = memref.get_global @malloc : memref<2xf64>
  %h = memref.get_global @adpasses_error_slot : memref<1xf64>
  %a = memref.load %g[%c1] : memref<2xf64>
  memref.store %x, %h[%c0] : memref<1xf64>
  %b = memref.load %h[%c0] : memref<1xf64>
  %m = memref.alloc(%c1) : memref<?xf64>
  memref.dealloc %m : memref<?xf64>
  %r = arith.addf %a, %b : f64
  func.return %r : f64
}"""
    f = compile_module(text)["f"]
    assert f(3.0) == 5.0
    with pytest.raises(IndexError):  # the error slot is still the runtime's
        compile_module(text.replace("%a = memref.load %g[%c1]", "%a = memref.load %g[%c1]")
                       .replace("memref.load %h[%c0]", "memref.load %h[%c1]"))["f"](1.0)


def test_unicode_and_escape_like_names() -> None:
    """MCJIT looks symbols up in ASCII: non-ASCII names are escaped ($XX),
    injectively (a name spelled like an escape stays distinct)."""
    text = """func.func @"dötλ"(%x: f64, %y: f64) -> f64 {
  %r = arith.mulf %x, %y : f64
  func.return %r : f64
}
func.func @"d$C3$B6t$CE$BB"(%x: f64) -> f64 {
  func.return %x : f64
}
func.func @"a b"(%x: f64) -> f64 {
  %r = func.call @"dötλ"(%x, %x) : (f64, f64) -> f64
  func.return %r : f64
}"""
    m = compile_module(text)
    assert m["dötλ"](2.0, 3.0) == 6.0
    assert m["d$C3$B6t$CE$BB"](5.0) == 5.0
    assert m["a b"](3.0) == 9.0
    assert len({m.address("dötλ"), m.address("d$C3$B6t$CE$BB"), m.address("a b")}) == 3


def test_external_declarations_keep_their_c_names() -> None:
    """A declaration (no body) names a C function on purpose: it is called."""
    text = """func.func private @cos(f64) -> f64
func.func @f(%x: f64) -> f64 {
  %r = func.call @cos(%x) : (f64) -> f64
  %s = math.atan %r : f64
  func.return %s : f64
}"""
    assert compile_module(text)["f"](0.5) == pytest.approx(math.atan(math.cos(0.5)), rel=1e-15)


@pytest.mark.parametrize("name", ["__adpasses_oob", "adpasses_error_slot", "__py_entry_f", "u.f",
                                  "llvm.exp.f64", "__c_entry_g"])
def test_declarations_may_not_use_reserved_names(name: str) -> None:
    text = f"""func.func private @"{name}"(f64) -> f64
func.func @f(%x: f64) -> f64 {{
  %r = func.call @"{name}"(%x) : (f64) -> f64
  func.return %r : f64
}}"""
    with pytest.raises(CompileError, match=rf"<compile_module>:1:1: error: 'func.func': declares "
                                           rf"'@{name}', a name reserved"):
        compile_module(text)


def test_declaration_with_another_type_than_the_c_function() -> None:
    """@malloc declared as (i64) -> i64 while a memref.alloc calls C's
    malloc (i64) -> ptr: one symbol, two types. (The arrays are chosen by a
    select, so they stay heap arrays: ad-promote-scratch would otherwise
    put a non-escaping one in a workspace, without a malloc call.)"""
    text = """func.func private @malloc(i64) -> i64
func.func @f(%n: index, %p: i1) -> i64 {
  %c0 = arith.constant 0 : index
  %k = arith.constant 8 : i64
  %a = memref.alloc(%n) : memref<?xf64>
  %b = memref.alloc(%n) : memref<?xf64>
  %m = arith.select %p, %a, %b : memref<?xf64>
  memref.dealloc %a : memref<?xf64>
  memref.dealloc %b : memref<?xf64>
  %r = func.call @malloc(%k) : (i64) -> i64
  func.return %r : i64
}"""
    with pytest.raises(CompileError, match=r"<compile_module>:1:1: error: 'func.func': declares '@malloc' "
                                           r"with LLVM type i64 \(i64\), but the generated code calls "
                                           r"the C function malloc with type ptr \(i64\)"):
        compile_module(text)


def test_emitted_llvm_ir_uses_mangled_names(tmp_path) -> None:
    path = tmp_path / "names.mlir"
    path.write_text(FUNCTION.format(name="atan"))
    r = run_tool("ad-opt", str(path), "--emit=llvm-ir")
    assert r.returncode == 0, str(r)
    assert 'define double @"u.atan"(' in r.stdout
    assert 'declare double @"atan"(double' in r.stdout
    assert 'call double @"atan"(double' in r.stdout
    r = run_tool("ad-opt", str(path), "--emit=llvm-ir", "--opt")
    assert "define double @u.atan(" in r.stdout and "@atan(double" in r.stdout


def test_inspect_shows_mangled_names() -> None:
    import gencode_names as N

    info = adpasses.inspect(N.atan, 0.5)
    assert '@"u.atan"' in info.llvm_ir and '@"atan"' in info.llvm_ir
    assert_matches(adpasses.grad(N.atan)(0.5), finite_differences(math.atan, [0.5], [0])[0])
