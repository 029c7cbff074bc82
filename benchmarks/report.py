"""Markdown tables, the JSON record and the PNG plots of a run."""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict
from collections.abc import Sequence

from benchmarks.harness import Row, fmt_bytes, fmt_time

COLUMNS = ["kernel", "size", "tool", "primal", "gradient", "grad/primal", "compile", "peak RSS growth",
           "tracemalloc peak", "taped", "allocs/call", "rel. err", "note"]


def _err(row: Row) -> str:
    if row.rel_err is None:
        return "-"
    mark = "" if row.ok else " **✗**"
    return f"{row.rel_err:.0e}{mark}" if row.rel_err else "0"


def _ratio(row: Row) -> str:
    r = row.ratio
    return f"{r:.2f}" if r is not None else "-"


def row_cells(row: Row) -> list[str]:
    return [
        row.kernel, row.size, row.tool, fmt_time(row.primal_s), fmt_time(row.grad_s), _ratio(row),
        fmt_time(row.compile_s), fmt_bytes(row.peak_rss), fmt_bytes(row.peak_traced),
        fmt_bytes(row.taped_bytes) if row.taped_bytes is not None else "-",
        str(row.allocations) if row.allocations is not None else "-", _err(row), row.note,
    ]


def table(rows: Sequence[Row], columns: Sequence[str] = COLUMNS) -> str:
    keep = [k for k, c in enumerate(COLUMNS) if c in columns]
    cells = [[row_cells(r)[k] for k in keep] for r in rows]
    # drop columns that are empty in every row (except size/tool)
    used = [j for j in range(len(keep))
            if COLUMNS[keep[j]] in ("size", "tool") or any(c[j] not in ("-", "") for c in cells)]
    if len({r.kernel for r in rows}) <= 1:  # one kernel: the section title names it
        used = [j for j in used if COLUMNS[keep[j]] != "kernel"]
    head = [COLUMNS[keep[j]] for j in used]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in cells:
        lines.append("| " + " | ".join(c[j].replace("|", "\\|") for j in used) + " |")
    return "\n".join(lines)


def sections(rows: Sequence[Row]) -> OrderedDict[str, list[Row]]:
    out: OrderedDict[str, list[Row]] = OrderedDict()
    for r in rows:
        out.setdefault(r.section, []).append(r)
    return out


def slower_than_peers(rows: Sequence[Row]) -> list[tuple[Row, Row]]:
    """(our API row, fastest peer row) where a peer's gradient is faster."""
    out = []
    groups: OrderedDict[tuple, list[Row]] = OrderedDict()
    for r in rows:
        if r.extra.get("loop_style") or r.grad_s is None:
            continue
        groups.setdefault((r.section, r.size), []).append(r)
    for group in groups.values():
        mine = [r for r in group if r.tool == "adpasses"]
        others = [r for r in group if not r.tool.startswith("adpasses") and r.ok is not False]
        if not mine or not others:
            continue
        best = min(others, key=lambda r: r.grad_s)  # type: ignore[arg-type,return-value]
        if best.grad_s < mine[0].grad_s:  # type: ignore[operator]
            out.append((mine[0], best))
    return out


def summary_tables(rows: Sequence[Row]) -> str:
    parts = []
    # issue 3: gradient / primal
    ratio_rows = [r for r in rows if r.ratio is not None and not r.extra.get("loop_style")
                  and r.section.startswith(("1.", "2.", "3.", "4.", "5.", "6.", "7."))]
    if ratio_rows:
        parts.append("### Gradient / primal time (each tool against its own primal)\n")
        parts.append("| kernel | size | tool | primal | gradient | ratio |\n|---|---|---|---|---|---|")
        for r in ratio_rows:
            parts.append(f"| {r.kernel} | {r.size} | {r.tool} | {fmt_time(r.primal_s)} | "
                         f"{fmt_time(r.grad_s)} | {r.ratio:.2f} |")
        parts.append("")
    # issue 4: Python API overhead and compile time
    api = {(r.section, r.size): r for r in rows if r.tool == "adpasses" and r.grad_s
           and not r.extra.get("loop_style")}
    raw = {(r.section, r.size): r for r in rows if r.tool == "adpasses raw" and r.grad_s}
    if raw:
        parts.append("### Python API path against the raw compiled call (ours)\n")
        parts.append("| kernel | size | primal: API | primal: raw | gradient: API | gradient: raw "
                     "| API overhead per gradient | compile: jit + first primal | compile: first grad "
                     "(of which LLVM) |\n|---|---|---|---|---|---|---|---|---|")
        for key, rr in raw.items():
            a = api.get(key)
            if a is None:
                continue
            over = (a.grad_s or 0) - (rr.grad_s or 0)
            cp, cg = a.extra.get("compile_primal_s"), a.extra.get("compile_grad_s")
            llvm = a.extra.get("grad_llvm_s")
            parts.append(
                f"| {a.kernel} | {a.size} | {fmt_time(a.primal_s)} | {fmt_time(rr.primal_s)} | "
                f"{fmt_time(a.grad_s)} | {fmt_time(rr.grad_s)} | {fmt_time(over) if over > 0 else '~0'} | "
                f"{fmt_time(cp)} | {fmt_time(cg)} ({fmt_time(llvm)}) |")
        parts.append("")
    slow = slower_than_peers(rows)
    if slow:
        parts.append("### Where a peer's gradient is faster than ours (adpasses API row)\n")
        parts.append("| kernel | size | ours | fastest peer | its time | ours / peer |\n|---|---|---|---|---|---|")
        for mine, best in slow:
            parts.append(f"| {mine.kernel} | {mine.size} | {fmt_time(mine.grad_s)} | {best.tool} | "
                         f"{fmt_time(best.grad_s)} | {mine.grad_s / best.grad_s:.2f}x |")  # type: ignore[operator]
        parts.append("")
    bad = [r for r in rows if r.ok is False]
    if bad:
        parts.append("### Rows whose gradient differs from ours (rel. err >= 1e-9)\n")
        for r in bad:
            parts.append(f"- {r.section} / {r.size} / {r.tool}: rel. err {r.rel_err:.2e}")
        parts.append("")
    return "\n".join(parts)


def markdown(rows: Sequence[Row], meta: dict) -> str:
    out = ["# adpasses benchmark results", ""]
    out.append(f"Run {meta['date']} ({'quick' if meta['options']['quick'] else 'full'}"
               f"{', only ' + ', '.join(meta['options']['only']) if meta['options']['only'] else ''}), "
               f"{meta['duration_s']:.0f} s. Machine: {meta['machine']['cpu']}, "
               f"{meta['machine']['cores']} cores, {meta['machine']['memory']}; load average "
               f"{meta['load_before']:.2f} before, {meta['load_after']:.2f} after. "
               f"Clock: {meta['options']['clock']}. Every tool on one thread.")
    out.append("")
    out.append("Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items() if v))
    if meta.get("skipped"):
        out.append("")
        for line in meta["skipped"]:
            out.append(f"- {line}")
    out.append("")
    out.append("Times are medians of repeated runs after a warm-up call; `compile` is the first call "
               "minus a steady call (ours: jit + first primal, plus first gradient). `rel. err` is the "
               "max-norm relative difference of the tool's gradient from ours (must be < 1e-9). "
               "`peak RSS growth` is the resident-set high-water mark during one gradient above the "
               "resident set before it (all tools); `tracemalloc peak` covers numpy allocations "
               "(numpy-based tools). `taped`: bytes our reverse sweep tapes per gradient (cache "
               "report); `allocs/call`: heap allocations by our generated code per gradient after "
               "the first call. See docs/benchmarks.md.")
    out.append("")
    for title, group in sections(rows).items():
        out.append(f"## {title}\n")
        out.append(table(group))
        out.append("")
    summary = summary_tables(rows)
    if summary:
        out.append("## Summaries\n")
        out.append(summary)
    if meta.get("cold_start"):
        from benchmarks.cold_start import table as cold_table

        out.append("## Cold start (fresh process, energy kernel)\n")
        out.append("Medians over fresh processes: import numpy, import the tool, first gradient; the "
                   "tool's disk cache empty (cold) or filled by the previous process (warm). adpasses "
                   "`jit(cache=True)`, numba `njit(cache=True)` of a hand-written gradient, JAX's "
                   "persistent compilation cache (benchmarks/cold_start.py, docs/deployment.md).\n")
        out.append(cold_table(meta["cold_start"]))
        out.append("")
    if meta.get("plots"):
        out.append("## Plots\n")
        for p in meta["plots"]:
            out.append(f"![{p}]({p})")
        out.append("")
    return "\n".join(out)


def write_json(path: str, rows: Sequence[Row], meta: dict) -> None:
    def clean(v):  # type: ignore[no-untyped-def]
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    def default(o):  # type: ignore[no-untyped-def]
        if hasattr(o, "item"):  # numpy scalars
            return o.item()
        return str(o)

    with open(path, "w") as f:
        json.dump(clean({"meta": meta, "rows": [r.to_json() for r in rows]}), f, indent=1,
                  default=default)
        f.write("\n")


# -- plots -----------------------------------------------------------------------------------

FAMILY_COLORS = {"adpasses": "black", "numba": "tab:green", "numpy": "tab:olive", "jax": "tab:red",
                 "torch": "tab:purple", "autograd": "tab:brown"}


def family(tool: str) -> str:
    return tool.split()[0].split(",")[0]


def _style(tool: str) -> dict:
    fam = family(tool)
    style = {"color": FAMILY_COLORS.get(fam, "gray"), "marker": "o", "linestyle": "-", "lw": 1.5}
    if "raw" in tool:
        style.update(linestyle=":", marker=".")
    if "Python loop" in tool:
        style.update(linestyle="--", marker="s")
    elif "loop" in tool or "scan" in tool:
        style.update(linestyle="-.")
    if "fori_loop" in tool or "recompute" in tool or "jit (" in tool:
        style.update(marker="^")
    if fam == "adpasses" and "raw" not in tool:
        style.update(lw=2.5)
    return style


def plots(rows: Sequence[Row], outdir: str) -> list[str]:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []
    scaling = [k for k in ("strided", "energy", "inplace") if any(r.kernel == k and r.n for r in rows)]
    if scaling:
        fig, axes = plt.subplots(1, len(scaling), figsize=(7 * len(scaling), 5.5), squeeze=False)
        for ax, kernel in zip(axes[0], scaling):
            tools: OrderedDict[str, list[Row]] = OrderedDict()
            for r in rows:
                if r.kernel == kernel and r.n and r.grad_s and r.section[:2] in ("1.", "2.", "5."):
                    tools.setdefault(r.tool, []).append(r)
            for tool, rs in tools.items():
                rs = sorted(rs, key=lambda r: r.n)  # type: ignore[arg-type,return-value]
                ax.loglog([r.n for r in rs], [r.grad_s for r in rs], label=tool, **_style(tool))
            ax.set_xlabel("n")
            ax.set_ylabel("gradient time (s)")
            ax.set_title(next(r.section for r in rows if r.kernel == kernel), fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            if tools:
                ax.legend(fontsize=7)
        fig.suptitle("Gradient time against n (log-log); dashed: the peers' Python-loop style", fontsize=10)
        fig.tight_layout()
        path = os.path.join(outdir, "scaling.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append("scaling.png")
    # gradient / primal ratio bars: per kernel (largest size run) and tool
    # family, the family's fastest gradient (its own primal as the base)
    picked: OrderedDict[str, dict[str, Row]] = OrderedDict()
    largest: dict[str, int] = {}
    for r in rows:
        if r.ratio is None or r.extra.get("loop_style") or not r.section[:2].rstrip(".").isdigit():
            continue
        largest[r.kernel] = max(largest.get(r.kernel, 0), r.n or 0)
    for r in rows:
        if (r.ratio is None or r.extra.get("loop_style") or r.kernel not in largest
                or (r.n or 0) != largest[r.kernel] or "raw" in r.tool or "diagnostic" in r.tool
                or r.ok is False):
            continue
        fam = family(r.tool)
        cur = picked.setdefault(r.kernel, {}).get(fam)
        if cur is None or r.grad_s < cur.grad_s:  # type: ignore[operator]
            picked[r.kernel][fam] = r
    if picked:
        fams = [f for f in FAMILY_COLORS if any(f in d for d in picked.values())]
        fig, ax = plt.subplots(figsize=(max(9, 1.7 * len(picked)), 5.5))
        width = 0.8 / max(1, len(fams))
        for k, fam in enumerate(fams):
            xs, ys = [], []
            for i, d in enumerate(picked.values()):
                if fam in d:
                    xs.append(i + (k - (len(fams) - 1) / 2) * width)
                    ys.append(d[fam].ratio)
            ax.bar(xs, ys, width, label=fam, color=FAMILY_COLORS[fam])
            for x, y in zip(xs, ys):
                ax.text(x, y, f"{y:.1f}", ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(picked)))
        ax.set_xticklabels([f"{k}\n{next(iter(d.values())).size}" for k, d in picked.items()], fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("gradient time / primal time")
        ax.axhline(1.0, color="k", lw=0.5)
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title("Gradient / primal time per tool family (its fastest gradient idiom, largest size run; "
                     "small: batch rows)", fontsize=9)
        fig.tight_layout()
        path = os.path.join(outdir, "ratios.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append("ratios.png")
    return written
