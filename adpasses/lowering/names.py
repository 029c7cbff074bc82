"""LLVM symbol names: user symbols never clash with C library, CPython,
runtime or internal names.

Generated code calls C functions by name (libm `atan`, `exp2` for the
`llvm.exp2` intrinsic, `malloc`, `free`, `printf`, CPython's
`PyFloat_AsDouble`, ...) and defines internal ones (`__adpasses_oob`,
`__py_entry_f`, ...). A user function or memref.global under one of those
names used to become that symbol: `@atan` computing `math.atan` called
itself (atan(0.6) returned 0.6), the gradient of `@exp2` never returned,
`@malloc` or `@adpasses_error_slot` broke the module.

So every symbol the user *defines* (a function with a body, a
memref.global) is `u.<name>` in LLVM: no C, CPython or LLVM symbol contains
a dot after `u`, and no internal name starts with `u.`. A function the
user only *declares* (no body) names an external C function on purpose and
keeps its name; it may not use a reserved prefix, and must have the type
the generated code gives the same C function if both use it
(`ModuleTranslator.declare`).
"""

from __future__ import annotations

USER_PREFIX = "u."
RESERVED_PREFIXES = (USER_PREFIX, "__adpasses", "adpasses_", "__py_entry_", "__c_entry_", "llvm.")
"""Prefixes an external declaration may not use: the mangled user symbols,
the runtime's and the JIT's own names, LLVM intrinsics."""


def ascii_symbol(name: str) -> str:
    """`name` with every byte outside [A-Za-z0-9_.] (UTF-8) written as
    `$XX`: injective, and ASCII, which MCJIT's symbol lookup requires
    (`@"dötλ"` is a valid MLIR symbol)."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_.") else
                   "".join(f"${b:02X}" for b in ch.encode()) for ch in name)


def user_symbol(name: str) -> str:
    """The LLVM name of a function or global the user defines as `@name`."""
    return USER_PREFIX + ascii_symbol(name)


def reserved(name: str) -> bool:
    return name.startswith(RESERVED_PREFIXES)
