"""Issue 6: cache minimisation, before and after, on every kernel.

For each kernel, two gradients built by `differentiate(build_module(f), ...)`
with `ReverseOptions(cache_policy="tape-all")` (tape every needed value
defined in a loop or branch: the baseline) and `"minimal"` (min-cut over
reuse / recompute / reload / tape, the default), compiled by
`compile_module`: taped bytes per gradient (from the cache report, bound
to the arguments) and gradient time, side by side. The two gradients must
agree (rel. err < 1e-9). Sizes are the kernels' own, smaller where
tape-all would tape hundreds of megabytes (dense layer: 64 steps).
"""

from __future__ import annotations

import numpy as np

from benchmarks import ours
from benchmarks.harness import OPTIONS, Contender, log, measure

KEY = "policy"
TITLE = "Issue 6: taped bytes and gradient time, cache policy tape-all vs minimal"


def cases() -> list[tuple]:
    """(kernel, size label, function, make_args, argnums)"""
    from benchmarks.kernels import activity, dense, energy, euler, inplace, mlp, small, strided

    q = OPTIONS.quick
    rng = np.random.default_rng(10)
    n1 = 10**5 if q else 10**6
    T = 8 if q else 64
    nb = 10**4 if q else 10**5
    ne, steps = (100, 100) if q else (1000, 1000)
    x1 = rng.uniform(-1, 1, n1)
    x2 = rng.uniform(-0.5, 0.5, 1000)
    V, Wv = rng.uniform(-1, 1, (nb, 3)), rng.uniform(-1, 1, (nb, 2))
    W, b, X = rng.standard_normal((32, 64)) * 0.1, rng.standard_normal(32) * 0.1, \
        rng.standard_normal((T, 64, 128))
    xs = np.where(rng.random(nb) < 0.5, -1.0, 1.0)
    u0 = np.linspace(0.2, 1.0, ne)
    Xm, ym = rng.standard_normal((64, 128)), rng.standard_normal(64)
    W1, W2 = rng.standard_normal((128, 128)) / 11.3, rng.standard_normal(128) / 11.3
    xh = rng.uniform(-1.0, 0.999, nb)
    all_cases = [
        ("strided", f"n=10^{6 if not q else 5}", strided.strided_diff, lambda: [x1], (0,)),
        ("energy", "n=10^3", energy.energy, lambda: [x2], (0,)),
        ("small (batch loop)", f"N=10^{5 if not q else 4}", small.batch, lambda: [V, Wv], (0, 1)),
        ("dense", f"T={T}", dense.dense, lambda: [W, b, X], (0, 1)),
        ("inplace", f"n=10^{5 if not q else 4}", inplace.square_then_sum, lambda: [xs.copy()], (0,)),
        ("euler", f"n={ne}, {steps} steps", euler.euler, lambda: [u0.copy(), steps, 0.01], (0,)),
        ("mlp", "batch 64", mlp.mlp_loss, lambda: [Xm, ym, W1, W2], (2, 3)),
        ("weighted histogram", f"n=10^{5 if not q else 4}", activity.weighted_hist,
         lambda: [xh, np.zeros(64, dtype=np.int64)], (0,)),
    ]
    if q:  # --quick: three kernels
        return [c for c in all_cases if c[0] in ("strided", "energy", "euler")]
    return all_cases


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rows = []
    for kernel, size, fn, make_args, argnums in cases():
        log(f"  {KEY} {kernel} {size}")
        cs = []
        variants = {}
        ref = None
        for policy in ("tape-all", "minimal"):
            args = make_args()
            v = ours.build_variant(fn, args, argnums, cache_policy=policy)
            variants[policy] = (v, args)
            call, shadows = v.closure(args)
            cs.append(Contender(f"adpasses, cache policy {policy}", call,
                                extract=lambda out, v=v, sh=shadows: ours.gradient_of(out, v.argnums, v.acts, sh),
                                memory=False, extra={"reverse_options": f"cache_policy={policy}"}))
        ref = variants["minimal"][0].gradient(make_args())
        group = measure(TITLE, kernel, size, None, cs, ref)
        for row, policy in zip(group, ("tape-all", "minimal")):
            v, args = variants[policy]
            row.taped_bytes = v.taped_bytes
            row.allocations, row.extra["allocated_bytes"] = ours.allocations(v.closure(make_args())[0])
        before, after = group
        if before.grad_s and after.grad_s and before.taped_bytes is not None:
            after.note = (f"{(after.taped_bytes or 0) / max(1, before.taped_bytes):.1%} of tape-all's "
                          f"bytes, {after.grad_s / before.grad_s:.2f}x its time")
        rows += group
    return rows
