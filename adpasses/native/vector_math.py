"""SIMD math: vectorised loops call glibc's libmvec for exp, log, sin, ...

LLVM's loop vectoriser widens `call double @llvm.exp.f64(...)` only if it
knows a vector version, and it would learn one from a vector library
(`-vector-library=LIBMVEC`), which does not reach the vectoriser through
llvmlite's pass builder (measured: docs/lowering.md, "SIMD math").
Without one, a loop with `exp` stays scalar, or is widened and its
`llvm.exp.v8f64` split back into eight libm calls.

So this module tells the vectoriser itself, the way LLVM's own
`InjectTLIMappings` pass does: before LLVM's pipeline, each call of a
mapped intrinsic gets the call-site attribute
`"vector-function-abi-variant"="_ZGV_LLVM_N4v_llvm.exp.f64(_ZGVdN4v_exp),..."`
(one variant per vector width the CPU has), the vector functions are
declared and kept in `@llvm.compiler.used`. The vectoriser then calls
`_ZGVdN4v_exp` on `<4 x double>` where it widens the loop; scalar calls
(straight-line code, a loop's remainder, loops it does not widen) stay the
scalar intrinsic, so scalar code is what it was. The SLP vectoriser reads
the same attribute.

Used only where it is sound: x86-64 with libmvec loadable and each vector
symbol present (`available()`); elsewhere (macOS, musl, another
architecture) the IR is left as it was and loops call scalar libm as
before. `ADPASSES_VECTOR_MATH=0` turns it off (the before/after of the
benchmarks). libmvec's functions are glibc's (max. error 4 ulp, glibc's
manual; special values handled: inf, nan, subnormals, huge arguments;
checked against numpy in test/test_vector_math.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import re
from collections.abc import Iterator

from adpasses.core.compile_locks import ChildFreshLock

# Intrinsic -> (libmvec base name, parameter letters): `v` per vector operand.
FUNCTIONS: dict[str, tuple[str, str]] = {
    "exp": ("exp", "v"),
    "exp2": ("exp2", "v"),
    "log": ("log", "v"),
    "log2": ("log2", "v"),
    "log10": ("log10", "v"),
    "sin": ("sin", "v"),
    "cos": ("cos", "v"),
    "tanh": ("tanh", "v"),
    "pow": ("pow", "vv"),
}

# x86-64 vector function ABI: ISA letter, CPU feature it needs, register bits.
_ISAS = (("b", "sse4.1", 128), ("d", "avx2", 256), ("e", "avx512f", 512))
_ELEMENTS = {"f64": ("double", "", 64), "f32": ("float", "f", 32)}

_lock = ChildFreshLock()
_available: dict[str, list[tuple[int, str]]] | None = None
_library: str | None = None


def _enabled_by_environment() -> bool:
    return os.environ.get("ADPASSES_VECTOR_MATH", "1").strip().lower() not in ("0", "off", "false", "no")


def load_library() -> str | None:
    """Load libmvec into the process for the JIT linker (once); its path,
    or None where it does not exist. Object code from the disk cache that
    calls it needs this too (llvm_jit.machine_code_of_object)."""
    global _library
    if _library is not None:
        return _library or None
    import platform

    import llvmlite.binding as llvm

    from adpasses.core.compile_locks import LLVM_LOCK

    path = ""
    if platform.machine() in ("x86_64", "AMD64") and platform.system() == "Linux":
        found = ctypes.util.find_library("mvec")
        if found:
            try:
                with LLVM_LOCK:
                    llvm.load_library_permanently(found)
                path = found
            except RuntimeError:
                path = ""
    _library = path
    return path or None


def available() -> dict[str, list[tuple[int, str]]]:
    """Per mapped intrinsic suffix (`"exp.f64"`): the (lanes, vector symbol)
    this process can call, widest last; empty where vector math is off or
    absent. Computed once per process."""
    global _available
    if _available is not None:
        return _available
    with _lock:
        if _available is not None:
            return _available
        found: dict[str, list[tuple[int, str]]] = {}
        path = load_library() if _enabled_by_environment() else None
        if path:
            import llvmlite.binding as llvm

            features = llvm.get_host_cpu_features()
            library = ctypes.CDLL(path)
            for isa, feature, bits in _ISAS:
                if not features.get(feature, False):
                    continue
                for intrinsic, (base, params) in FUNCTIONS.items():
                    for elem, (_, suffix, width) in _ELEMENTS.items():
                        lanes = bits // width
                        symbol = f"_ZGV{isa}N{lanes}{params}_{base}{suffix}"
                        if hasattr(library, symbol):
                            found.setdefault(f"{intrinsic}.{elem}", []).append((lanes, symbol))
        _available = found
        return found


def reset_for_tests() -> None:
    """Forget what `available()` found (tests that change the environment)."""
    global _available
    with _lock:
        _available = None


_CALL = re.compile(
    r'^(?P<head>\s*%\S+ = (?:tail )?call [^@\n]*@"?llvm\.(?P<fn>[a-z0-9]+)\.(?P<elem>f32|f64)"?'
    r'\([^()\n]*\))$', re.MULTILINE)
_ATTRIBUTE_GROUP = re.compile(r"^attributes #(\d+)", re.MULTILINE)


def annotate(ir_text: str) -> str:
    """`ir_text` with the vector variants of its mapped intrinsic calls
    declared and attached (above); unchanged if none is available or the
    module already has an `@llvm.compiler.used`."""
    variants = available()
    if not variants or "@llvm.compiler.used" in ir_text:
        return ir_text
    groups: dict[str, int] = {}
    declared: dict[str, str] = {}
    next_group = max((int(n) for n in _ATTRIBUTE_GROUP.findall(ir_text)), default=0) + 1

    def attach(m: re.Match) -> str:
        nonlocal next_group
        key = f"{m['fn']}.{m['elem']}"
        if m["fn"] not in FUNCTIONS or key not in variants:
            return m.group(0)
        params = FUNCTIONS[m["fn"]][1]
        scalar = _ELEMENTS[m["elem"]][0]
        mapping = []
        for lanes, symbol in variants[key]:
            mapping.append(f"_ZGV_LLVM_N{lanes}{params}_llvm.{key}({symbol})")
            vector = f"<{lanes} x {scalar}>"
            declared[symbol] = f"declare {vector} @{symbol}({', '.join([vector] * len(params))})"
        value = ",".join(mapping)
        if value not in groups:
            groups[value] = next_group
            next_group += 1
        return f"{m['head']} #{groups[value]}"

    text = _CALL.sub(attach, ir_text)
    if not groups:
        return ir_text
    used = ", ".join(f"ptr @{s}" for s in declared)
    tail = ["", *declared.values(),
            f'@llvm.compiler.used = appending global [{len(declared)} x ptr] [{used}], '
            'section "llvm.metadata"',
            *(f'attributes #{n} = {{ "vector-function-abi-variant"="{v}" }}' for v, n in groups.items())]
    return text + "\n".join(tail) + "\n"


@contextlib.contextmanager
def ordered_reductions(on: bool) -> Iterator[None]:
    """While LLVM optimises a module with vector math calls: let the loop
    vectoriser widen loops that sum in order (`s += exp(x[i])` without
    fast-math), keeping the additions in their order (`llvm.vector.reduce.fadd`
    with a start value: the same sum, bit for bit, as the scalar loop) while
    the exponentials run four or eight at a time. x86's default is off
    (LoopVectorize's `-force-ordered-reductions`): without vector math such a
    loop gains nothing. An LLVM option is process-wide, so it is set and
    reset around one pass run; the caller holds LLVM_LOCK."""
    if not on:
        yield
        return
    import llvmlite.binding as llvm

    llvm.set_option("adpasses", "-force-ordered-reductions=true")
    try:
        yield
    finally:
        llvm.set_option("adpasses", "-force-ordered-reductions=false")
