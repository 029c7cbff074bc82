"""The per-call overlap test and signature code of the Python API.

`arrays_overlap` compares byte ranges: cheap and conservative (interleaved
views count as overlapping). The fast paths use it to send any call whose
arrays may share memory to the general path, where `adpasses.api.aliasing`
decides with exact tests. Shadows are indexed with logical indices and
their own strides, so a shadow need not have its array's layout, except
that the shadow of a C-contiguous array (typed with the identity layout)
must be C-contiguous too.
"""

from __future__ import annotations


# The per-call helpers are CPython builtins compiled on first use
# (adpasses.native.dispatch); these stubs replace themselves with them.

def signature_code(*args: object) -> int:
    """A small int naming the argument types; 0 when some argument needs
    the slow path (see adpasses.native.dispatch)."""
    _load_dispatch()
    return signature_code(*args)


def arrays_overlap(*args: object) -> bool:
    """True if the memory of two of the numpy arrays among `args` overlaps."""
    _load_dispatch()
    return arrays_overlap(*args)


def dispatch_ready() -> bool:
    """Whether the builtins are made (calling them waits for nothing)."""
    from adpasses.native.dispatch import ready

    return ready()


def prepare_dispatch() -> None:
    """Start making the builtins in the background (a first compilation
    calls this before importing the compiler: adpasses.native.dispatch.prepare)."""
    from adpasses.native.dispatch import prepare

    prepare()


def _load_dispatch() -> None:
    global signature_code, arrays_overlap
    from adpasses.native.dispatch import fast_functions

    signature_code, arrays_overlap = fast_functions()
