"""JIT compilation of lowered modules with llvmlite (MCJIT), and their cache.

`compile_module(module_or_text)` lowers (adpasses.lowering), adds a Python
entry shim per public function (adpasses.native.pyentry), optimises at O3 with loop
and SLP vectorisation for the host CPU, and returns a `CompiledModule` whose
items are Python callables. Compiled modules are cached in memory: text is
keyed by its contents, an xDSL module by the text of its LLVM IR (printing
LLVM IR costs a few ms; LLVM's optimisation and code generation cost tens).
The in-process path never prints and re-parses MLIR and never runs xDSL's
verifier (tests do; `ad-opt --debug` does).

A compiled module keeps its object code and a plain-data description of
its entries (`CompiledModule.object_code`, `.description`);
`load_compiled(object_code, description)` rebuilds the callables in any
process without xDSL (the disk cache: adpasses.native.object_cache).
"""

from __future__ import annotations

import collections
import hashlib
import threading
import time
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from typing import TYPE_CHECKING

import llvmlite.binding as llvm

from adpasses.core import log, print_codes
from adpasses.core.compile_locks import LLVM_LOCK, load_compiler, locked, once
from adpasses.core.compile_thread import compile_entry, current_stack_bytes, run_with_stack
from adpasses.core.options import check_flag, check_module_input, check_opt_level
from adpasses.native import blas, externs, runtime, vector_math

if TYPE_CHECKING:  # xDSL is imported when something is compiled, not to load machine code
    from xdsl.dialects.builtin import ModuleOp


T = TypeVar("T")

_initialized = False


def _target_machine(opt_level: int = 3) -> llvm.TargetMachine:
    global _initialized
    with LLVM_LOCK:
        if not _initialized:
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            _initialized = True
        target = llvm.Target.from_triple(llvm.get_process_triple())
        return target.create_target_machine(
            cpu=llvm.get_host_cpu_name(),
            features=llvm.get_host_cpu_features().flatten(),
            opt=opt_level,
            jit=True,
        )


# LLVM's loop unswitching is left at its default threshold: limiting it
# (-unswitch-threshold=20) cut the dense-layer gradient's LLVM time from
# 0.50 s to 0.37 s but made its run 4% slower (29.5 -> 30.7 ms, measured
# 2026-11-22); a gradient runs many more times than it compiles.


# LLVM's optimiser recurses once per instruction of a dependent chain (the
# constant folding of a 50,000-op straight-line function after inlining:
# about 330 bytes of stack per instruction measured, 16 MB for 50,000 ops,
# 64 MB for 200,000). A module gets a stack of this many bytes per line of IR;
# code generation at O0 does not recurse (1,000,000 ops on 8 MB).
LLVM_STACK_PER_LINE = 1024


def llvm_stack_bytes(ir_text: str) -> int:
    """The stack LLVM's optimiser may need for this IR (an upper bound)."""
    return ir_text.count("\n") * LLVM_STACK_PER_LINE


def _thread_stack_bytes() -> int:
    """The stack of the calling thread, as far as it is known."""
    known = current_stack_bytes()
    if known:
        return known
    import resource

    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    default = 8 << 20  # what glibc gives a thread when the limit is unlimited
    return threading.stack_size() or (soft if 0 < soft < default else default)


def on_llvm_stack(stage: Callable[[str, int], T], ir_text: str, opt_level: int,
                  moved: bool = False) -> T:
    """`stage(ir_text, opt_level)` on a stack large enough for LLVM's
    recursion on this IR: the calling thread's when it suffices, else a new
    thread's; at O0 (with a RuntimeWarning) if no such stack can be had, since
    a stack overflow in LLVM would kill the process."""
    if opt_level > 0:
        need = llvm_stack_bytes(ir_text)
        if need > _thread_stack_bytes():
            if not moved:
                return run_with_stack(on_llvm_stack, stage, ir_text, opt_level, True,
                                      stack_bytes=need)
            warnings.warn(
                f"adpasses: optimising this module ({ir_text.count(chr(10))} lines of LLVM IR) "
                f"needs about {need >> 20} MB of stack, more than this system gives a thread; "
                "it is compiled without optimisation (O0)", RuntimeWarning, stacklevel=2)
            opt_level = 0
    return stage(ir_text, opt_level)


# LLVM's optimisation effort is bounded by the size of the largest function
# (lines of LLVM IR, about one instruction each): a function past a bound is
# optimised at a cheaper level, so that no program can keep the compiler busy
# for minutes. O3 differs from O2 mainly by non-trivial loop unswitching,
# which clones loops over loop-invariant branches: its cost grew faster than
# quadratically with the loops of a function (a Hessian's tangent function,
# 13,000 lines: O2 4 s, O3 48 s; 32,000 lines: O3 did not finish in minutes),
# and O1 and O0 leave out the vectorisers and then most of the rest.
# Measured on the 18,700-line tangent function of the Hessian of
# sum(tanh(a @ x @ x)) (docs/lowering.md, "How much LLVM optimises").
OPT_LEVEL_LIMITS = ((3, 20_000), (2, 60_000), (1, 200_000))
"""(level, the largest function in lines of IR it is used for)."""


def largest_function_lines(ir_text: str) -> int:
    """Lines of the largest function defined in LLVM IR text (its `define`
    line and its body)."""
    largest = 0
    for chunk in ("\n" + ir_text).split("\ndefine ")[1:]:
        end = chunk.find("\n}\n")
        largest = max(largest, chunk.count("\n", 0, end + 1 if end >= 0 else len(chunk)))
    return largest


def affordable_level(ir_text: str, requested: int) -> tuple[int, str]:
    """The optimisation level to use for this IR: `requested`, or a cheaper
    one when its largest function is past `OPT_LEVEL_LIMITS`; and, when it
    is lowered, why (empty otherwise)."""
    if requested == 0:
        return 0, ""
    lines = largest_function_lines(ir_text)
    level = next((lvl for lvl, limit in OPT_LEVEL_LIMITS if lvl <= requested and lines <= limit), 0)
    if level == requested:
        return level, ""
    return level, (f"its largest function has {lines} lines of LLVM IR, more than O{requested} "
                   f"is used for ({dict(OPT_LEVEL_LIMITS).get(requested, 0)}); optimised at O{level} "
                   "(adpasses.native.llvm_jit.OPT_LEVEL_LIMITS)")


def optimized_module(ir_text: str, opt_level: int = 3) -> llvm.ModuleRef:
    """Parse LLVM IR (into LLVM's global context) and run LLVM's pipeline
    (loop + SLP vectorisation on), on a stack large enough for it
    (`on_llvm_stack`), at a cheaper level for a very large function
    (`affordable_level`, logged)."""
    level, reduced = affordable_level(ir_text, opt_level)
    if reduced:
        log.warning("optimising LLVM IR: %s", reduced)
    return on_llvm_stack(_optimized_module, ir_text, level)


def _optimized_module(ir_text: str, opt_level: int, context: object = None) -> llvm.ModuleRef:
    vector_calls = False
    if opt_level > 0:
        # Vectorised loops call libmvec (adpasses.native.vector_math).
        annotated = vector_math.annotate(ir_text)
        vector_calls, ir_text = annotated is not ir_text, annotated
    with LLVM_LOCK:
        tm = _target_machine(opt_level)
        mod = llvm.parse_assembly(ir_text, context)
        mod.triple = llvm.get_process_triple()
        mod.data_layout = str(tm.target_data)
        if opt_level > 0:
            pto = llvm.PipelineTuningOptions(speed_level=opt_level)
            pto.loop_vectorization = True
            pto.slp_vectorization = True
            pb = llvm.create_pass_builder(tm, pto)
            with vector_math.ordered_reductions(vector_calls):
                pb.getModulePassManager().run(mod, pb)
        return mod


def _machine_code(ir_text: str, opt_level: int) -> tuple[MachineCode, float, bytes]:
    """The machine code of optimised IR (in an LLVM context of its own),
    when optimisation ended, and the object code MCJIT generated (which
    `machine_code_of_object` loads again, here or in another process)."""
    with LLVM_LOCK:
        context = llvm.create_context()
        mod = _optimized_module(ir_text, opt_level, context)
        optimized = time.perf_counter()
        engine = llvm.create_mcjit_compiler(mod, _target_machine(opt_level))
        objects: list[bytes] = []
        engine.set_object_cache(notify_func=lambda _module, data: objects.append(data))
        engine.finalize_object()
        return MachineCode(engine, context), optimized, b"".join(objects)


def machine_code_of_object(object_code: bytes) -> MachineCode:
    """Load object code that `_machine_code` generated (in this process or
    another one on the same CPU) and link it: the runtime's symbols and
    the C library's (and libmvec's: vector_math) resolve by name."""
    vector_math.load_library()
    blas.available()  # its symbols, for code that calls BLAS (the environment key has it)
    with LLVM_LOCK:
        context = llvm.create_context()
        engine = llvm.create_mcjit_compiler(llvm.parse_assembly("", context), _target_machine())
        # MCJIT takes the object's buffer over (llvmlite's takeBinary).
        engine.add_object_file(llvm.ObjectFileRef.from_data(object_code))
        engine.finalize_object()
        return MachineCode(engine, context)


@dataclass
class CompileTimes:
    """Seconds spent compiling a module: `lower_s` (xDSL IR -> LLVM IR text,
    entry shims included), `llvm_s` (LLVM: parse and optimise, `opt_s`, then
    MCJIT's code generation, `codegen_s`); `opt_level`, the level LLVM
    optimised at, and `reduced`, why it is below the one asked for (empty
    if it is not: `affordable_level`)."""

    lower_s: float = 0.0
    llvm_s: float = 0.0
    opt_s: float = 0.0
    codegen_s: float = 0.0
    opt_level: int | None = None
    reduced: str = ""


class MachineCode:
    """The MCJIT engine that owns one module's machine code, and the LLVM
    context its IR lives in. Every Python object that can jump into that
    code holds this object: each entry builtin (through its `self`,
    `pyentry.CallErrors`), each ctypes caller, and so every cache, fast path
    and dispatch table that holds one of them. When the last of them goes,
    the engine (code, IR) and then the context are disposed; never before.

    A context of its own per module: LLVM's global context keeps every
    type and constant any module ever used (about 0.2 MB per compiled
    function, measured), a private one goes with its module."""

    __slots__ = ("engine", "context", "__weakref__")

    def __init__(self, engine: object, context: object):
        self.engine = engine
        # Only this object disposes the context, after the engine: keep the
        # raw pointer and detach llvmlite's object, whose own finaliser the
        # garbage collector may run first (when a cycle holding this object
        # dies, all of them are finalised in any order).
        self.context = context._ptr  # type: ignore[attr-defined]
        context.detach()  # type: ignore[attr-defined]

    def __del__(self) -> None:
        # The engine's module lives in the context: engine first (closing
        # twice is harmless: the engine's own finaliser may have run).
        engine, context = self.engine, self.context
        self.engine = self.context = None
        try:
            if engine is not None:
                engine.close()  # type: ignore[attr-defined]
            if context is not None:
                llvm.ffi.lib.LLVMPY_ContextDispose(context)
        except (AttributeError, TypeError):
            # Interpreter exit: llvmlite's modules are already torn down
            # (their globals are None); the process's memory goes anyway.
            pass

    def address(self, name: str) -> int:
        with LLVM_LOCK:
            return self.engine.get_function_address(name)  # type: ignore[attr-defined]


@dataclass
class CompiledModule:
    """Python callables for the public functions of a compiled module. Its
    machine code lives as long as this object or any of the callables.

    `object_code` (the object MCJIT linked) and `description` (plain data:
    per public function its name, entry and function symbols, parameter
    names and type texts; the check sites; whether the code calls the
    half-precision conversions) are what `load_compiled` needs to rebuild it;
    `description` is None for the ctypes binding, which is not cached.
    `llvm_ir` is "" for a module loaded that way."""

    functions: dict[str, Callable]
    code: MachineCode
    llvm_ir: str
    times: CompileTimes = field(default_factory=CompileTimes)
    object_code: bytes = b""
    description: dict | None = None

    def __getitem__(self, name: str) -> Callable:
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"no public function '@{name}' in this module "
                           f"(has: {', '.join(sorted(self.functions)) or 'none'})") from None

    def __getattr__(self, name: str) -> Callable:
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(name)

    @property
    def engine(self) -> object:
        """The llvmlite ExecutionEngine."""
        return self.code.engine

    def address(self, name: str) -> int:
        """Address of the compiled function `@name` (internal ABI; in LLVM
        it is `u.name`: adpasses.lowering.names); valid while this module or
        one of its callables is alive."""
        from adpasses.lowering.names import user_symbol

        return self.code.address(user_symbol(name))


def _check_external_symbols(llmod) -> None:  # type: ignore[no-untyped-def]
    """Every library function the code calls must exist in this process:
    MCJIT would otherwise jump to address 0 when it is called."""
    import ctypes

    from adpasses.core.diagnostics import CompileError

    process = ctypes.CDLL(None)
    for fn in llmod.functions:
        name = fn.name
        if fn.is_declaration and not name.startswith("llvm.") and name not in _RUNTIME_SYMBOLS \
                and not externs.is_extern(name):
            try:
                getattr(process, name)
            except AttributeError:
                raise CompileError(
                    f"the generated code calls '{name}', which this process's C library lacks"
                ) from None


def _binding(binding: str) -> str:
    from adpasses.native.pyentry import FAST_PATH

    if binding not in ("auto", "shim", "ctypes"):
        raise ValueError(f"binding must be 'auto', 'shim' or 'ctypes', got {binding!r}")
    if binding == "auto":
        return "shim" if FAST_PATH else "ctypes"
    if binding == "shim" and not FAST_PATH:
        raise RuntimeError("numpy's array layout is not the one the shims read; use binding='ctypes'")
    return binding


_RUNTIME_SYMBOLS = {"adpasses_alloc_stats", "adpasses_error_slot", *runtime.THREAD_RUNTIME_FUNCTIONS,
                    print_codes.SYMBOL, *blas.SYMBOLS}

# Compiled modules by key, held weakly: a module stays cached while
# something uses it (a jitted function's caches, a caller), and its code is
# freed once nothing does (issue 13, item 14).
_CACHE: weakref.WeakValueDictionary[str, CompiledModule] = weakref.WeakValueDictionary()
_TEXT_CACHE: weakref.WeakValueDictionary[tuple[str, bool, bool, int, bool, str], CompiledModule] = \
    weakref.WeakValueDictionary()
# The modules of the most recent MLIR texts are also held strongly, so
# that `compile_module(text)["f"](...)` in a loop compiles once. A live
# module costs about 0.9 MB (MCJIT's code generation state), so only a few.
RECENT_TEXTS = 8
_RECENT_TEXT: collections.OrderedDict[tuple, CompiledModule] = collections.OrderedDict()
stats = {"compiled": 0, "cache_hits": 0}


def _keep_recent(key: tuple, compiled: CompiledModule) -> None:
    with locked("recent MLIR texts"):
        _RECENT_TEXT[key] = compiled
        _RECENT_TEXT.move_to_end(key)
        while len(_RECENT_TEXT) > RECENT_TEXTS:
            _RECENT_TEXT.popitem(last=False)


def clear_caches() -> None:
    """Forget every compiled module (its code lives on in the callables
    still holding it)."""
    with locked("recent MLIR texts"):
        _RECENT_TEXT.clear()
    _TEXT_CACHE.clear()
    _CACHE.clear()


def _cached(cache: weakref.WeakValueDictionary, key: object,
            build: Callable[[], CompiledModule]) -> CompiledModule:
    """`cache[key]`, else `build()` once per key: a thread asking for a
    module another thread is compiling waits for it."""
    hit = cache.get(key)
    if hit is not None:
        stats["cache_hits"] += 1
        return hit
    return once(cache, key, build)


def compile_module(
    module_or_text: "ModuleOp | str",
    *,
    boundscheck: bool = True,
    fastmath: bool = False,
    opt_level: int = 3,
    workspace: bool = True,
    binding: str = "auto",
) -> CompiledModule:
    """Compile an xDSL module (or MLIR text) to native code; cached.

    `workspace`: tape buffers marked `ad.workspace` are kept across calls
    (module globals), so a gradient that needs a tape allocates only when a
    call needs more tape than any before.
    `binding`: "auto" (CPython builtin shims reading numpy arrays directly,
    unless numpy's layout is not the expected one), "shim" or "ctypes".

    Thread-safe: a module is compiled once per key even when several
    threads ask for it at the same time (the others wait and share it)."""
    # Before the first lazy import: see compile_locks (fork). Text is parsed
    # with the whole dialect registry.
    load_compiler(registry=isinstance(module_or_text, str))
    # Options are checked here, on the caller's thread, so that a misuse is a
    # TypeError/ValueError raised from this call.
    check_module_input(module_or_text)
    api = "compile_module()"
    return _compile(module_or_text, boundscheck=check_flag(boundscheck, "boundscheck", api),
                    fastmath=check_flag(fastmath, "fastmath", api),
                    opt_level=check_opt_level(opt_level, api),
                    workspace=check_flag(workspace, "workspace", api), binding=_binding(binding))


@compile_entry
def _compile(module_or_text: "ModuleOp | str", *, boundscheck: bool, fastmath: bool, opt_level: int,
             workspace: bool, binding: str) -> CompiledModule:
    if isinstance(module_or_text, str):
        text = module_or_text
        key = (text, boundscheck, fastmath, opt_level, workspace, binding)

        def from_text() -> CompiledModule:
            from adpasses.core.context import parse_module
            from adpasses.core.verify import verify_module

            module = parse_module(text, "<compile_module>")
            verify_module(module)
            return _compile(module, boundscheck=boundscheck, fastmath=fastmath,
                            opt_level=opt_level, workspace=workspace, binding=binding)

        compiled = _cached(_TEXT_CACHE, key, from_text)
        _keep_recent(key, compiled)
        return compiled

    from xdsl.dialects import func

    from adpasses.lowering.core import ModuleTranslator, define_oob_handler
    from adpasses.lowering.half import SYMBOLS as HALF_SYMBOLS
    from adpasses.lowering.names import user_symbol
    from adpasses.native.array_results import check_returned_memory
    from adpasses.native.ctypes_entry import add_c_entry, make_ctypes_caller
    from adpasses.native.pyentry import add_entry_shim, parameters
    from adpasses.transforms.expand_upstream_ops import without_upstream_only_ops

    from adpasses.transforms.promote_scratch import without_heap_scratch

    start = time.perf_counter()
    expanded = without_upstream_only_ops(module_or_text, blas=blas.available())
    # Loops over columns that walk down each column: passes over rows (docs/lowering.md).
    from adpasses.transforms.interchange_columns import with_rows_outside

    expanded = with_rows_outside(expanded, copy=expanded is module_or_text)
    # Loops marked parallel and proven independent: ad.parallel_for (docs/parallel.md).
    from adpasses.transforms.parallelize import with_parallel_loops

    expanded = with_parallel_loops(expanded, copy=expanded is module_or_text)
    # Local arrays that never leave their function: stack slots or workspaces.
    module_or_text = without_heap_scratch(expanded, copy=expanded is module_or_text)
    translator = ModuleTranslator(module_or_text, boundscheck=boundscheck, fastmath=fastmath,
                                  workspace=workspace)
    translator.translate()
    public = [
        f for f in module_or_text.ops
        if isinstance(f, func.FuncOp) and f.body.blocks
        and (f.sym_visibility is None or f.sym_visibility.data != "private")
    ]
    for f in public:
        check_returned_memory(f)
    add_entry = add_entry_shim if binding == "shim" else add_c_entry
    shims = {f.sym_name.data: add_entry(translator, f) for f in public}
    define_oob_handler(translator)
    ir_text = str(translator.llvm)
    lowered = time.perf_counter()
    # The check sites (source locations of bounds checks) are not in the IR
    # text but in the error messages: modules differing only there differ.
    sites_text = "\n".join(translator.check_sites)
    key = hashlib.sha1(f"{boundscheck}{fastmath}{opt_level}{workspace}{binding}\n{ir_text}\n"
                       f"{sites_text}".encode()).hexdigest()

    def generate() -> CompiledModule:
        runtime.register_symbols()
        called_externs = externs.declared_externs(translator.llvm)
        externs.bind(called_externs)  # adpasses.extern functions, by address
        _check_external_symbols(translator.llvm)
        optimizing = time.perf_counter()
        level, reduced = affordable_level(ir_text, opt_level)
        if reduced:
            log.warning("compiling %s: %s", ", ".join(f"@{f.sym_name.data}" for f in public) or "a module",
                        reduced)
        code, optimized, object_code = on_llvm_stack(_machine_code, ir_text, level)
        generated = time.perf_counter()
        sites = list(translator.check_sites)
        times = CompileTimes(lowered - start, 0.0, optimized - optimizing, generated - optimized,
                             level, reduced)
        if binding == "shim":
            description = {
                "functions": [{"name": f.sym_name.data, "entry": shims[f.sym_name.data],
                               "symbol": user_symbol(f.sym_name.data),
                               "parameters": [(p.name, p.text) for p in parameters(f)]}
                              for f in public],
                "check_sites": sites,
                "half": any(fn.name in HALF_SYMBOLS for fn in translator.llvm.functions),
                "externs": called_externs,
            }
            compiled = _callers(code, description, ir_text, times, object_code,
                                {f.sym_name.data: parameters(f) for f in public})
        else:
            with LLVM_LOCK:
                addresses = {name: (code.engine.get_function_address(shims[name]),  # type: ignore[attr-defined]
                                    code.engine.get_function_address(user_symbol(name)))  # type: ignore[attr-defined]
                             for f in public for name in (f.sym_name.data,)}
            functions = {name: make_ctypes_caller(name, f, *addresses[name], sites, code)
                         for f in public for name in (f.sym_name.data,)}
            compiled = CompiledModule(functions, code, ir_text, times, object_code)
        times.llvm_s = time.perf_counter() - lowered
        stats["compiled"] += 1
        return compiled

    return _cached(_CACHE, key, generate)


def _callers(code: MachineCode, description: dict, llvm_ir: str, times: CompileTimes,
             object_code: bytes, known: dict | None = None) -> CompiledModule:
    """The CompiledModule of machine code with entry shims, from its
    description (no xDSL); `known`: the parameters with their xDSL types,
    when they are at hand."""
    from adpasses.native.callers import Parameter, make_caller

    sites = list(description["check_sites"])
    functions = {}
    for entry in description["functions"]:
        params = (known or {}).get(entry["name"]) or \
            [Parameter(name, text=text) for name, text in entry["parameters"]]
        functions[entry["name"]] = make_caller(entry["name"], params, code.address(entry["entry"]),
                                               code.address(entry["symbol"]), sites, code)
    return CompiledModule(functions, code, llvm_ir, times, object_code, description)


def load_compiled(object_code: bytes, description: dict) -> CompiledModule:
    """A CompiledModule from the object code and description of one
    compiled (in this process or another on the same CPU, with the same
    versions: the disk cache's key says so). Imports no xDSL."""
    if description.get("half"):
        runtime.register_symbols()  # compiles the half-precision conversions the code calls
    else:
        runtime.register_python_objects()
        runtime.register_thread_runtime()
    externs.bind(description.get("externs", []))  # before the object code is linked
    start = time.perf_counter()
    code = machine_code_of_object(object_code)
    times = CompileTimes(codegen_s=time.perf_counter() - start)
    times.llvm_s = times.codegen_s
    return _callers(code, description, "", times, object_code)
