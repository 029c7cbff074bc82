"""C functions called from compiled code by address (`adpasses.extern`):
their LLVM symbols.

An extern is declared in the IR as a function without a body named
`extern.<name>` (adpasses/api/custom_rules.py). Generated code calls such a
declaration by that symbol, like a C library function; here each name is
bound to its address (`llvm.add_symbol`) before code that calls it is
generated or loaded. Registering needs no LLVM (`import adpasses` stays
cheap); binding happens on first use. The names are stable across
processes for one program (the function's name and signature, numbered
only when two externs share both), so code kept on disk
(`jit(cache=True)`) finds its externs again once the module that creates
them is imported; code that names an extern this process has not created
is refused when loaded (`bind`), never called at address 0.
"""

from __future__ import annotations

from adpasses.core.compile_locks import ChildFreshLock

PREFIX = "extern."

_ADDRESSES: dict[str, int] = {}
_BOUND: set[str] = set()
_LOCK = ChildFreshLock()


def register(base: str, address: int) -> str:
    """The symbol for the C function at `address` (a new one unless the
    same function was registered under this base name before)."""
    with _LOCK:
        name, k = PREFIX + base, 1
        while name in _ADDRESSES and _ADDRESSES[name] != address:
            k += 1
            name = f"{PREFIX}{base}.{k}"
        _ADDRESSES[name] = address
        return name


def is_extern(name: str) -> bool:
    return name in _ADDRESSES


def bind(names: list[str]) -> None:
    """Bind each symbol to its address for the JIT (under the LLVM lock)."""
    from adpasses.core.compile_locks import LLVM_LOCK

    missing = [n for n in names if n not in _ADDRESSES]
    if missing:
        raise RuntimeError(
            f"compiled code calls the extern function(s) {', '.join(missing)}, which this process has "
            "not created with adpasses.extern: import the module that creates them first")
    todo = [n for n in names if n not in _BOUND]
    if not todo:
        return
    import llvmlite.binding as llvm

    with LLVM_LOCK:
        for n in todo:
            llvm.add_symbol(n, _ADDRESSES[n])
            _BOUND.add(n)


def declared_externs(llvm_module) -> list[str]:  # type: ignore[no-untyped-def]
    """The extern symbols an llvmlite module declares."""
    return [fn.name for fn in llvm_module.functions if fn.is_declaration and fn.name in _ADDRESSES]
