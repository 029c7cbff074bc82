"""The adpasses benchmark suite (issue 8), run from a checkout:

    python -m benchmarks            # full suite, ~10-15 minutes on 2 cores
    python -m benchmarks --quick    # small sizes only, under a minute
    python -m benchmarks --only strided

It prints a markdown table per kernel, writes benchmarks/results/latest.json
and latest.md, and draws PNG plots there. Every gradient is checked against
ours before it is timed. See docs/benchmarks.md for the kernels, the peers'
idioms and the method. This package is not installed with adpasses: it runs
from the repository root.
"""

import os as _os

# One thread for every tool (BLAS, OpenMP, XLA's Eigen pool), set before
# numpy, JAX or PyTorch load: adpasses and numba loops run on one core, so
# their peers do too. PyTorch additionally gets torch.set_num_threads(1).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_var, "1")
if "xla_cpu_multi_thread_eigen" not in _os.environ.get("XLA_FLAGS", ""):
    _os.environ["XLA_FLAGS"] = (_os.environ.get("XLA_FLAGS", "")
                                + " --xla_cpu_multi_thread_eigen=false").strip()
_os.environ.setdefault("JAX_PLATFORMS", "cpu")
