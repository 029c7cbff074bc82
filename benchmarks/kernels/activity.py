"""Issue 5: what activity analysis saves on a kernel whose work is half
inactive.

    tab[j] = exp(-0.1 j), j < 64                      (a constant table, local)
    for i: k = int((x_i + 1) * 32); counts[k] += 1    (an integer histogram)
           s += tab[k] * x_i^2
    gradient with respect to x

With the analysis (the default) only `s`, `x` and the product are active:
the table, the histogram and the bin index are primal-only. Without it
(ReverseOptions(activity=False): every float is active) the table gets a
shadow, the 64 exponentials are differentiated (their values taped), and
every iteration adds into the table's shadow. Both gradients are built by
`differentiate(build_module(f), ...)` and compiled by `compile_module`,
and timed side by side (raw calls, preallocated shadows).
"""

from __future__ import annotations

import math

import numpy as np

from benchmarks import ours
from benchmarks.harness import OPTIONS, Contender, log, measure, size_label

KEY = "activity"
TITLE = "Issue 5: activity analysis on and off (half the work inactive)"


def weighted_hist(x, counts):
    tab = np.zeros(64)
    for j in range(64):
        tab[j] = math.exp(-0.1 * j)
    s = 0.0
    for i in range(len(x)):
        k = int((x[i] + 1.0) * 32.0)
        counts[k] += 1
        s += tab[k] * x[i] * x[i]
    return s


def run(ctx) -> list:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(9)
    rows = []
    for n in ([10**4] if OPTIONS.quick else [10**4, 10**6]):
        x = rng.uniform(-1.0, 0.999, n)
        counts = np.zeros(64, dtype=np.int64)
        args = [x, counts]
        want = 2.0 * x * np.exp(-0.1 * ((x + 1.0) * 32.0).astype(np.int64))
        cs = []
        variants = {}
        for on in (True, False):
            v = ours.build_variant(weighted_hist, args, (0,), activity=on)
            variants[on] = v
            call, shadows = v.closure(args)
            cs.append(Contender(f"adpasses, activity analysis {'on' if on else 'off'}", call,
                                extract=lambda out, v=v, sh=shadows: ours.gradient_of(out, (0,), v.acts, sh),
                                memory=False,
                                extra={"reverse_options": f"activity={on}", "acts": list(v.acts)}))
        primal = variants[True].primal
        cs[0].primal = lambda: primal(*args)
        cs[1].primal = cs[0].primal
        log(f"  {KEY} {size_label(n)}")
        group = measure(TITLE, "weighted histogram", size_label(n), n, cs, want)
        for row, on in zip(group, (True, False)):
            row.taped_bytes = variants[on].taped_bytes
            row.allocations, row.extra["allocated_bytes"] = ours.allocations(variants[on].closure(args)[0])
            row.note = "hand-derived gradient is the reference"
        on_row, off_row = group
        if on_row.grad_s and off_row.grad_s:
            off_row.note += f"; {off_row.grad_s / on_row.grad_s:.2f}x the time with the analysis"
        rows += group
    return rows
