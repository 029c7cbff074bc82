"""`python -m adpasses.tools.fuzz`: differential testing from the command line.

    python -m adpasses.tools.fuzz --seeds N [--start S] [--jobs J] [--timeout T]
                            [--shrink [--out DIR] [--max-shrink K]]
    python -m adpasses.tools.fuzz --show SEED      # the program of one seed
    python -m adpasses.tools.fuzz --case SEED      # check one seed in this process
    python -m adpasses.tools.fuzz --aliased ...    # the aliased-arguments mode (fuzz/aliased.py)
    python -m adpasses.tools.fuzz --threads N ...  # N threads call each gradient at once (fuzz/threads.py)
    python -m adpasses.tools.fuzz --mode forward ...   # jvps: finite differences, dot-product test (fuzz/forward.py)
    python -m adpasses.tools.fuzz --mode hessian ...   # Hessian-vector products by forward over reverse (fuzz/hessian.py)
    python -m adpasses.tools.fuzz --mode arrays ...    # numpy array programs vs numpy and finite differences (fuzz/arrays.py)
    python -m adpasses.tools.fuzz --mode parallel ...  # loops marked parallel vs serial (fuzz/parallel.py)

Prints how many programs were checked, the failures by kind with their
seeds, and with --shrink a minimal lit test per distinct failure (also
written to DIR). The exit status is 1 when anything failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

from adpasses.tools.fuzz.check import (
    ALIASED_KINDS,
    ARRAY_KINDS,
    FORWARD_KINDS,
    HESSIAN_KINDS,
    KINDS,
    PARALLEL_KINDS,
    THREAD_KINDS,
)

MODE_KINDS = {"reverse": (), "forward": FORWARD_KINDS, "hessian": HESSIAN_KINDS,
              "arrays": ("wrong tangent", "changed argument", *PARALLEL_KINDS, *ARRAY_KINDS), "parallel": PARALLEL_KINDS}


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m adpasses.tools.fuzz", description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=100, help="number of programs (default 100)")
    p.add_argument("--start", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds one program may take before it counts as a crash (default 120)")
    p.add_argument("--batch", type=int, default=20, help="seeds sent to a worker at once")
    p.add_argument("--shrink", action="store_true", help="shrink each distinct failure")
    p.add_argument("--max-shrink", type=int, default=10, help="most failures to shrink")
    p.add_argument("--out", default="fuzz-reproducers",
                   help="where --shrink writes its lit tests (default ./fuzz-reproducers)")
    p.add_argument("--show", type=int, metavar="SEED", help="print the program of SEED and exit")
    p.add_argument("--case", type=int, metavar="SEED", help="check SEED in this process and exit")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--aliased", action="store_true",
                   help="call generated Python functions through jit/grad/value_and_grad/autodiff with "
                        "arguments that share memory; each call must match a reference or raise "
                        "ValueError (docs/fuzzing.md)")
    p.add_argument("--threads", type=int, default=0, metavar="N",
                   help="compile and call each program's primal and gradient from N threads at once "
                        "(first call included); every call must equal the single-threaded one "
                        "(docs/fuzzing.md)")
    p.add_argument("--mode", choices=tuple(MODE_KINDS), default="reverse",
                   help="what is checked for each program: the gradient (reverse, default), the jvp "
                        "against finite differences and by the dot-product test with the gradient "
                        "(forward), or Hessian-vector products by forward over reverse against "
                        "finite differences of the gradient (hessian), or random numpy array programs "
                        "(whole-array expressions, slices, slice stores, array returns) against numpy and "
                        "finite differences (arrays), or with every top-level loop marked parallel "
                        "against the serial program on 3 threads (parallel) (docs/fuzzing.md)")
    args = p.parse_args(argv)
    if args.mode != "reverse" and (args.aliased or args.threads):
        p.error("--mode forward/hessian/arrays/parallel does not combine with --aliased or --threads")
    if args.mode == "parallel" and args.shrink:
        p.error("--shrink does not apply to --mode parallel (re-run a seed with --case SEED --mode parallel)")
    if args.mode == "arrays" and args.shrink:
        p.error("--shrink does not apply to --mode arrays (its programs are Python functions; "
                "--show SEED --mode arrays prints one)")
    if args.threads and args.threads < 2:
        p.error("--threads needs at least 2 threads")
    if args.threads and (args.aliased or args.shrink):
        p.error("--threads does not combine with --aliased or --shrink (a failing seed is "
                "re-run with --case SEED --threads N)")
    if args.aliased and args.shrink:
        p.error("--shrink does not apply to --aliased (its programs are Python functions; "
                "--show SEED --aliased prints one)")
    return args


def show(seed: int, mode: str = "reverse") -> None:
    from adpasses.tools.fuzz.generate import generate
    from adpasses.tools.fuzz.to_python import python_source

    p = generate(seed)
    print(f"// seed {seed}: activities {p.activity} -> {list(p.ret_activity)}; {p.options}")
    print(request_source(p, mode))
    print(python_source(p))


def request_source(p, mode: str) -> str:  # type: ignore[no-untyped-def]
    """The MLIR a mode compiles: the program, with the jvp or hvp request."""
    from adpasses.tools.fuzz.to_mlir import mlir_function

    if mode == "forward":
        from adpasses.tools.fuzz.forward import jvp_source

        return jvp_source(p)
    if mode == "hessian":
        from adpasses.tools.fuzz.hessian import hvp_source

        return hvp_source(p)
    return mlir_function(p)


def mode_case(mode: str):  # type: ignore[no-untyped-def]
    """The runner's `case` for a mode (None: the default, reverse)."""
    if mode == "forward":
        from adpasses.tools.fuzz.forward import run_forward_case

        return run_forward_case
    if mode == "hessian":
        from adpasses.tools.fuzz.hessian import run_hessian_case

        return run_hessian_case
    if mode == "arrays":
        from adpasses.tools.fuzz.arrays import run_array_case

        return run_array_case
    if mode == "parallel":
        from adpasses.tools.fuzz.parallel import run_parallel_case

        return run_parallel_case
    return None


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    if args.show is not None:
        if args.aliased:
            from adpasses.tools.fuzz.aliased import show_aliased

            print(show_aliased(args.show))
        elif args.mode == "arrays":
            from adpasses.tools.fuzz.arrays import show_arrays

            print(show_arrays(args.show))
        else:
            show(args.show, args.mode)
        return 0
    if args.case is not None:
        from adpasses.tools.fuzz.runner import run_case

        if args.aliased:
            from adpasses.tools.fuzz.aliased import run_aliased_case as run_case  # noqa: F811
        if args.threads:
            from adpasses.tools.fuzz.threads import threads_case

            run_case = threads_case(args.threads)  # noqa: F811
        run_case = mode_case(args.mode) or run_case  # noqa: F811

        outcome = run_case(args.case)
        print(f"seed {args.case}: {outcome.kind} {outcome.detail}".rstrip())
        return int(outcome.failed)

    from adpasses.tools.fuzz.runner import run_seeds

    seeds = range(args.start, args.start + args.seeds)
    by_kind: dict[str, list[int]] = defaultdict(list)
    details: dict[int, object] = {}
    start = time.monotonic()

    def progress(result) -> None:  # type: ignore[no-untyped-def]
        by_kind[result.outcome.kind].append(result.seed)
        details[result.seed] = result.outcome
        if result.outcome.kind not in ("ok", "discard") and not args.quiet:
            print(f"seed {result.seed}: {result.outcome.kind}: {result.outcome.detail}",
                  file=sys.stderr, flush=True)
        done = sum(len(v) for v in by_kind.values())
        if not args.quiet and done % 100 == 0:
            print(f"... {done}/{len(seeds)} in {time.monotonic() - start:.0f} s",
                  file=sys.stderr, flush=True)

    case = {}
    if args.aliased:
        from adpasses.tools.fuzz.aliased import run_aliased_case

        case = {"case": run_aliased_case}
    if args.threads:
        from adpasses.tools.fuzz.threads import threads_case

        case = {"case": threads_case(args.threads)}
    if mode_case(args.mode):
        case = {"case": mode_case(args.mode)}
    run_seeds(seeds, jobs=args.jobs, timeout=args.timeout, batch=args.batch, on_result=progress, **case)
    elapsed = time.monotonic() - start
    total = sum(len(v) for v in by_kind.values())
    print(f"checked {total} programs (seeds {args.start}..{args.start + args.seeds - 1}) "
          f"in {elapsed:.0f} s: {len(by_kind['ok'])} ok, {len(by_kind['discard'])} discarded "
          "(no usable input point)")
    if args.mode == "parallel":
        from adpasses.tools.fuzz.parallel import loops_summary

        print(loops_summary([details[seed] for seed in by_kind.get("ok", [])]))
    failed = False
    for kind in (*KINDS, *MODE_KINDS[args.mode], *(ALIASED_KINDS if args.aliased else ()),
                 *(THREAD_KINDS if args.threads else ()), "fuzzer error"):
        seeds_of_kind = sorted(by_kind.get(kind, []))
        failed |= bool(seeds_of_kind)
        print(f"{kind}: {len(seeds_of_kind)}" + (f"  seeds {' '.join(map(str, seeds_of_kind))}"
                                                  if seeds_of_kind else ""))
    if args.shrink and failed:
        failing = sorted(s for k in (*KINDS, *MODE_KINDS[args.mode]) for s in by_kind.get(k, []))
        shrink_all(failing, details, args)
    return int(failed)


def shrink_all(seeds: list[int], details: dict, args: argparse.Namespace) -> None:
    """Shrink failures, one per distinct signature, and write lit tests."""
    from adpasses.tools.fuzz.generate import generate
    from adpasses.tools.fuzz.program import program_size
    from adpasses.tools.fuzz.reproducer import lit_test
    from adpasses.tools.fuzz.runner import WorkerCheck
    from adpasses.tools.fuzz.shrink import shrink, signature

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    case = mode_case(args.mode)
    check = WorkerCheck(timeout=args.timeout, **({"case": case} if case else {}))
    try:
        for seed in seeds:
            if len(seen) >= args.max_shrink:
                break
            sig = signature(details[seed])
            if sig in seen:
                continue
            seen.add(sig)
            original = generate(seed)
            small, outcome = shrink(original, check)
            if not outcome.failed:
                print(f"\nseed {seed}: did not fail again in a worker ({outcome.kind})")
                continue
            path = out / f"seed_{seed}.mlir"
            if args.mode == "reverse":
                path.write_text(lit_test(small, outcome))
            else:  # the shrunk request; its check is `--case`, the reproducer is written by hand
                path.write_text(f"// seed {seed} shrunk, --mode {args.mode}: {outcome.kind}: "
                                f"{outcome.detail}\n" + request_source(small, args.mode))
            print(f"\n// ===== seed {seed}: {outcome.kind}, shrunk from size "
                  f"{program_size(original)} to {program_size(small)}: {path}")
            print(path.read_text())
    finally:
        check.close()


if __name__ == "__main__":
    sys.exit(main())
