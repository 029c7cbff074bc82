"""BLAS for generated code: numpy's own OpenBLAS.

`ad.gemm` (adpasses/lowering/blas.py) calls `adpasses_cblas_dgemm` /
`adpasses_cblas_sgemm`; this module points those symbols at the CBLAS
functions of the OpenBLAS that numpy's wheels bundle
(`numpy.libs/libscipy_openblas64_-<hash>.so`: `scipy_cblas_dgemm64_`,
`scipy_cblas_sgemm64_`, 64-bit integer sizes).

Why numpy's and not SciPy's `cython_blas` pointers (what numba uses):
numpy is already a dependency and loaded in every process that calls
compiled code, SciPy is not a dependency of adpasses; the CBLAS interface
takes row-major operands and a transpose flag directly; and its 64-bit
sizes never overflow (cython_blas's Fortran dgemm is LP64: 32-bit sizes).
Where numpy has no such library (conda's MKL or Accelerate builds, other
distributions) `available()` is False: the JIT then lowers matrix products
to loops only (adpasses/transforms/lower_matmul.py), never a call to
nothing. `ADPASSES_BLAS=0` turns BLAS off (measurements, tests).
"""

from __future__ import annotations

import ctypes
import glob
import os

from adpasses.core.compile_locks import ChildFreshLock

SYMBOLS = {"adpasses_cblas_dgemm": "scipy_cblas_dgemm64_", "adpasses_cblas_sgemm": "scipy_cblas_sgemm64_"}
"""Our symbol -> the OpenBLAS function it is."""

_lock = ChildFreshLock()
_state: bool | None = None
_library: ctypes.CDLL | None = None


def _openblas_path() -> str | None:
    import numpy as np

    folder = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    found = sorted(glob.glob(os.path.join(folder, "libscipy_openblas64_*.so*")))
    return found[0] if found else None


def available() -> bool:
    """Whether generated code may call BLAS: numpy's OpenBLAS found and its
    symbols given to the JIT linker (once per process)."""
    global _state, _library
    if _state is not None:
        return _state
    with _lock:
        if _state is not None:
            return _state
        ok = False
        if os.environ.get("ADPASSES_BLAS", "1").strip().lower() not in ("0", "off", "false", "no"):
            path = _openblas_path()
            if path is not None:
                try:
                    library = ctypes.CDLL(path)
                    addresses = {ours: ctypes.cast(getattr(library, theirs), ctypes.c_void_p).value
                                 for ours, theirs in SYMBOLS.items()}
                except (OSError, AttributeError):
                    addresses = {}
                if addresses and all(addresses.values()):
                    import llvmlite.binding as llvm

                    from adpasses.core.compile_locks import LLVM_LOCK

                    with LLVM_LOCK:
                        for name, address in addresses.items():
                            llvm.add_symbol(name, address)
                    _library, ok = library, True
        _state = ok
        return ok
