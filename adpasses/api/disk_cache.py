"""The disk cache of one `jit(cache=True)` function (docs/deployment.md).

Five kinds of entries, each keyed by the function's source fingerprint,
its argument signature and its options (and, through
`object_cache.entry_name`, the versions and the CPU):

- "facts": what the API asks before compiling (which arrays the function
  writes, which results are floats), so that a process with a warm cache
  never builds IR;
- "primal": the compiled function (object code and entry description);
- "gradient": a compiled gradient, per activity, primal flag, aliasing
  case and return activity;
- "forward": a compiled tangent function or forward driver (jvp, fwddiff,
  jacfwd, hessian, hvp; adpasses/api/forward.py `_compile_tangent`), per
  kind, activities, width, gradient activities and driver layout;
- "jacrev": a compiled jacrev driver with its gradient
  (adpasses/api/jacobians.py), per activity, output, argnums and width.

`source_fingerprint(fn)` covers what compiling `fn` reads: its source text
and place (file, first line: error messages name them), and for every name
its code reads from globals or its closure, what the frontend would take:
the value of a number (frozen at compile time), a module's name and, for
a user's module, every attribute the code may name (`helpers.f`,
`helpers.SCALE`), a function's (plain or jitted) own fingerprint,
recursively, and the defaults of each function (evaluated where it is
defined). Changing a callee's source, a global constant, a module's
constant or a default therefore changes the key.
"""

from __future__ import annotations

import hashlib
import inspect
import sys
import types
from pathlib import Path

import numpy as np

from adpasses.native import object_cache

_MISSING = object()


def _names(code: types.CodeType) -> set[str]:
    """Global names a code object (and the code nested in it) reads."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _python_function(value: object) -> types.FunctionType | None:
    inner = getattr(value, "__adpasses_function__", None)
    if isinstance(inner, types.FunctionType):
        return inner
    return value if isinstance(value, types.FunctionType) else None


def _source(fn: types.FunctionType) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        # No source file (an exec'd function): its bytecode and constants.
        code = fn.__code__
        return f"{code.co_code.hex()} {code.co_consts!r} {code.co_names!r}"


def _rule_functions(rules: object) -> list[types.FunctionType]:
    """The Python rule functions of a custom function or an extern
    (adpasses/api/custom_rules.py): compiled with it, so part of its source."""
    if rules is None:
        return []
    found = []
    for attr in ("fwd", "bwd", "jvp", "vjp"):
        value = getattr(rules, attr, None)
        if isinstance(value, types.FunctionType):
            found.append(value)
    return found


def _compiler_module(module: types.ModuleType) -> bool:
    """math, numpy, scipy, adpasses and the standard library: their
    attributes are compiled by the frontend itself (its version is in the
    environment key), never read from their source."""
    top = module.__name__.partition(".")[0]
    return top in ("numpy", "scipy", "adpasses") or top in sys.stdlib_module_names


def source_fingerprint(fn: types.FunctionType) -> str:
    h = hashlib.sha256()
    seen: set[int] = set()
    walked: set[tuple[int, int]] = set()  # (module, names of the code reading it)
    todo = [fn]

    def value(label: str, obj: object, names: set[str], depth: int = 0) -> None:
        """What the frontend takes from `obj`, read as `label` by code that
        reads `names` (its globals and attribute names)."""
        inner = _python_function(obj)
        if inner is not None:
            todo.append(inner)
            checkpointed = " checkpoint" if getattr(obj, "__adpasses_checkpoint__", False) is True else ""
            h.update(f"\0{label}=function{checkpointed} {inner.__module__}.{inner.__qualname__}".encode())
        elif getattr(obj, "__adpasses_extern__", False) is True:
            # adpasses.extern: its symbol and signature, and its rules' sources
            h.update(f"\0{label}=extern {obj.symbol} {obj.signature}".encode())  # type: ignore[attr-defined]
            todo.extend(_rule_functions(obj))
        elif isinstance(obj, (bool, int, float, np.number)):
            h.update(f"\0{label}={type(obj).__name__} {obj!r}".encode())
        elif isinstance(obj, types.ModuleType):
            h.update(f"\0{label}=module {obj.__name__}".encode())
            if _compiler_module(obj) or depth > 8 or (id(obj), id(names)) in walked:
                return
            walked.add((id(obj), id(names)))  # modules that import each other: once each
            # A user's module: compiled code reads `module.attr` (helpers.f,
            # helpers.SCALE, pkg.sub.f) like a global, so every attribute the
            # code may name is part of the key (co_names holds attribute names).
            for attr in sorted(names):
                member = obj.__dict__.get(attr, _MISSING)
                if member is not _MISSING:
                    value(f"{label}.{attr}", member, names, depth + 1)
        else:
            h.update(f"\0{label}={type(obj).__module__}.{type(obj).__qualname__}".encode())

    while todo:
        f = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        todo.extend(_rule_functions(f.__dict__.get("__adpasses_custom_rules__")))  # custom_vjp's
        code = f.__code__
        h.update(f"\0def {f.__module__}.{f.__qualname__} {code.co_filename}:{code.co_firstlineno}\n"
                 f"{_source(f)}".encode())
        names = _names(code)
        # Defaults are evaluated where f is defined (`def g(x, s=helpers.SCALE)`):
        # a callee's number default is frozen, a function default is compiled.
        for i, default in enumerate(f.__defaults__ or ()):
            value(f"{f.__qualname__}.__defaults__[{i}]", default, names)
        for key, default in sorted((f.__kwdefaults__ or {}).items()):
            value(f"{f.__qualname__}.{key}=", default, names)
        cells = zip(code.co_freevars, f.__closure__ or ())
        closure = {name: cell.cell_contents for name, cell in cells if _filled(cell)}
        for name in sorted(names | set(code.co_freevars)):
            obj = closure.get(name, f.__globals__.get(name, _MISSING))
            if obj is not _MISSING:  # else a builtin, or an attribute name
                value(name, obj, names)
    return h.hexdigest()


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # a closure variable not assigned yet
        return False
    return True


class DiskCache:
    """The entries of one jitted function (a JitFunction's `_disk`)."""

    def __init__(self, fn: types.FunctionType, options: tuple):
        self.fn = fn
        self.options = options
        self.folder: Path | None = object_cache.folder_for(fn.__code__.co_filename)
        self._fingerprint: str | None = None
        object_cache.enable_runtime_cache()

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            self._fingerprint = source_fingerprint(self.fn)
        return self._fingerprint

    def _path(self, kind: str, parts: tuple) -> Path | None:
        if self.folder is None:
            return None
        name = object_cache.entry_name(kind, self.fingerprint, self.options, *parts)
        return self.folder / name

    def read(self, kind: str, parts: tuple) -> dict | None:
        path = self._path(kind, parts)
        entry = object_cache.read(path) if path is not None else None
        if entry is None or entry.get("kind") != kind:
            object_cache.stats["misses"] += path is not None
            return None
        object_cache.stats["hits"] += 1
        return entry

    def write(self, kind: str, parts: tuple, entry: dict) -> None:
        path = self._path(kind, parts)
        if path is not None:
            object_cache.write(path, {"kind": kind, **entry})
            object_cache.share_runtime_with(path.parent)

    def load(self, kind: str, parts: tuple):  # type: ignore[no-untyped-def]
        """(CompiledModule, entry) from the cache, or None. An entry whose
        object code cannot be loaded counts as missing."""
        entry = self.read(kind, parts)
        if entry is None:
            return None
        from adpasses.native.llvm_jit import load_compiled

        try:
            return load_compiled(entry["object"], entry["description"]), entry
        except Exception as err:  # a damaged entry is recompiled, never fatal
            object_cache.stats["rejected"] += 1
            from adpasses.core import log

            log.warning("cache entry of %s unusable (%s): recompiling", self.fn.__qualname__, err)
            return None

    def store(self, kind: str, parts: tuple, compiled, **extra: object) -> None:  # type: ignore[no-untyped-def]
        if compiled.description is None or not compiled.object_code:
            return  # the ctypes binding: nothing to load elsewhere
        self.write(kind, parts, {"object": compiled.object_code, "description": compiled.description,
                                 **extra})
