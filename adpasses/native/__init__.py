"""Machine code: llvmlite compilation and its cache, the Python entry shims
and per-call dispatch, and the runtime (allocation counters, error slot)."""
