"""What each compilation of a jitted function cost, stage by stage.

A `CompileRecord` per primal or gradient compiled (or loaded) for a
signature: the function, the signature, the gradient's activities, where
the code came from (`compiled`; `disk` (the disk cache); `memory` (an
identical module compiled before in this process)) and seconds per stage:

    frontend          Python source -> IR (adpasses.frontend)
    ad-...            each step of the reverse pipeline (gradients; the
                      analyses and the cache plan are `ad-build-gradients`)
    lower             IR -> LLVM IR, entry shims included
    llvm-opt          LLVM's O3 pipeline
    codegen           MCJIT's code generation and linking
    load              reading and linking a disk cache entry

`JitFunction.compilations` lists them; with `ADPASSES_LOG=info` each is
also logged to the "adpasses" logger as one line (adpasses.core.log);
`adpasses.inspect` shows them (docs/deployment.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from adpasses.core import log


@dataclass
class CompileRecord:
    function: str
    kind: str                       # "primal" or "gradient"
    signature: str
    activity: tuple[str, ...] = ()
    source: str = "compiled"        # "compiled", "disk" or "memory"
    disk_cache: str = "off"         # "hit", "miss" or "off"
    stages: dict[str, float] = field(default_factory=dict)

    @property
    def total_s(self) -> float:
        return sum(self.stages.values())

    def __str__(self) -> str:
        what = self.kind + (f" ({', '.join(self.activity)})" if self.activity else "")
        stages = ", ".join(f"{name} {1e3 * s:.1f} ms" for name, s in self.stages.items())
        return (f"{self.function} {what} for ({self.signature}): {self.source}, disk cache {self.disk_cache}; "
                f"{stages}; total {1e3 * self.total_s:.1f} ms")


def signature_text(arg_types: list) -> str:
    """`float64[:], float` for the log: an array's dtype and rank (`[::?]`
    for a non-contiguous one), a scalar's kind."""
    parts = []
    for t in arg_types:
        ndim = getattr(t, "ndim", None)
        if ndim is None:
            parts.append(t.kind)
        else:
            dims = ", ".join([":"] * ndim) if t.contiguous else ", ".join(["::?"] * ndim)
            parts.append(f"{t.dtype}[{dims}]")
    return ", ".join(parts)


def module_stages(compiled, before: int, after: int) -> tuple[str, dict[str, float]]:  # type: ignore[no-untyped-def]
    """(source, stages) of a CompiledModule that compile_module returned;
    `before`/`after`: llvm_jit's count of compiled modules around the call
    (unchanged: an identical module compiled before was reused)."""
    if after == before:
        return "memory", {}
    t = compiled.times
    return "compiled", {"lower": t.lower_s, "llvm-opt": t.opt_s, "codegen": t.codegen_s}


def emit(record: CompileRecord) -> None:
    log.info("%s", record)
