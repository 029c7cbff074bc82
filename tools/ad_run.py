"""`ad-run`: compile an MLIR module and run one function, like mlir-cpu-runner.

    ad-run input.mlir [--entry main] [--no-boundscheck] [--opt-level N]

The entry function takes no arguments and prints with the printf dialect
(`printf.print_format "{} {}\\n", %a : f64, %b : index`). If the module contains
`ad.autodiff` ops, the reverse pass runs first. Errors are one line
(`file:line:col: error: ...`) with exit status 1; an out-of-bounds access at
run time prints its message and exits with status 1, and so does a failed
or impossible allocation or float-to-int conversion (as
`file:line:col: error: MemoryError: ...`); `--debug` shows Python
tracebacks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from adpasses.core.diagnostics import CompileError


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    from adpasses.transforms.build_gradients import CACHE_POLICIES

    p = argparse.ArgumentParser(prog="ad-run", description=__doc__.split("\n")[0])
    p.add_argument("input_file", nargs="?", help="MLIR file (default: stdin)")
    p.add_argument("--entry", default="main", help="function to run (no arguments)")
    p.add_argument("--no-boundscheck", action="store_true", help="omit bounds checks")
    p.add_argument("--opt-level", type=int, default=3, choices=range(4))
    p.add_argument("--cache-policy", choices=CACHE_POLICIES, default="minimal")
    p.add_argument("--no-simplify", action="store_true",
                   help="no canonicalize + cse on gradients (what the Python API does)")
    p.add_argument("--debug", action="store_true", help="show Python tracebacks")
    return p.parse_args(argv)


def run(args: argparse.Namespace) -> int:
    from xdsl.dialects import func

    from adpasses.core.context import decode_mlir, make_context, parse_module
    from adpasses.dialects.ad import AutodiffOp, FwddiffOp
    from adpasses.native.llvm_jit import compile_module
    from adpasses.core.verify import verify_module

    name = args.input_file or "<stdin>"
    if args.input_file:
        with open(args.input_file, "rb") as f:
            data = f.read()
    else:
        data = sys.stdin.buffer.read()
    text = decode_mlir(data, name)
    ctx = make_context()
    module = parse_module(text, name, ctx)
    verify_module(module)
    autodiff = next((op for op in module.walk() if isinstance(op, AutodiffOp)), None)
    fwddiff = next((op for op in module.walk() if isinstance(op, FwddiffOp)), None)
    if fwddiff is not None and autodiff is not None:
        # Before ad-reverse, the requests whose callee holds no ad.autodiff
        # (reverse over forward), as in `ad-opt --forward`.
        ad_pass("ad-forward", fwddiff)(simplify=not args.no_simplify, inner=True).apply(ctx, module)
    if autodiff is not None:
        ad_pass("ad-reverse", autodiff)(cache_policy=args.cache_policy,
                                        simplify=not args.no_simplify).apply(ctx, module)
    if fwddiff is not None:
        # After ad-reverse (forward over reverse), as in `ad-opt --forward`.
        ad_pass("ad-forward", fwddiff)(simplify=not args.no_simplify).apply(ctx, module)
    if autodiff is not None or fwddiff is not None:
        # Last, as in `ad-opt --reverse`: checks are elided on the final IR.
        ad_pass("ad-elide-shadow-checks", autodiff or fwddiff)().apply(ctx, module)
    entry = next((op for op in module.ops if isinstance(op, func.FuncOp)
                  and op.sym_name.data == args.entry), None)
    if entry is None:
        raise CompileError(f"no function '@{args.entry}' in {name}; choose one with --entry")
    if entry.function_type.inputs.data:
        raise CompileError(f"'@{args.entry}' takes arguments; ad-run runs a function without arguments",
                           op=entry)
    compiled = compile_module(module, boundscheck=not args.no_boundscheck, opt_level=args.opt_level)
    result = compiled[args.entry]()
    sys.stdout.flush()
    if result is not None:
        print(result)
    return 0


def ad_pass(name: str, request: object) -> type:
    """The pass class `name` of the reverse-mode pipeline; a clear error if
    it cannot be loaded (the module asks for derivatives, so it cannot run
    without)."""
    from adpasses.transforms.registry import AD_PASSES

    try:
        return AD_PASSES[name]()
    except Exception as err:  # noqa: BLE001 - any import failure of that layer
        raise CompileError(
            f"the module contains '{getattr(request, 'name', 'ad.autodiff')}', but the "
            f"{'forward' if name == 'ad-forward' else 'reverse'} pass ({name}) cannot be "
            f"loaded: {type(err).__name__}: {err}",
            op=request,  # type: ignore[arg-type]
        ) from err


def _one_line(err: Exception) -> str:
    """The error as ad-run prints it: a stop of the compiled code that knows
    its source location (adpasses.core.stop_codes) as `file:line:col: error:
    Kind: message`, like a compile error."""
    if isinstance(err, CompileError):
        return str(err)
    if isinstance(err, OSError) and err.filename is not None:  # the input file
        return f"error: cannot read '{err.filename}': {err.strerror}"
    location, detail = getattr(err, "location", None), getattr(err, "detail", None)
    if location and detail:
        return f"{location}: error: {type(err).__name__}: {detail}"
    return f"{type(err).__name__}: {err}"


def main(argv: Sequence[str] | None = None) -> int:
    from adpasses.core.compile_thread import run_with_stack

    args = _arguments(argv)
    try:
        # Parsing, passes, lowering and LLVM recurse as deep as the input nests.
        return run_with_stack(run, args)
    except (CompileError, IndexError, ZeroDivisionError, OSError) as err:
        if args.debug:
            raise
        sys.stdout.flush()
        print(_one_line(err), file=sys.stderr)
        return 1
    except Exception as err:  # noqa: BLE001 - every error becomes one line
        if args.debug:
            raise
        sys.stdout.flush()
        if getattr(err, "detail", None) is not None:  # a stop of the compiled code
            print(_one_line(err), file=sys.stderr)
            return 1
        from adpasses.tools.ad_opt import _diagnostic

        print(_diagnostic(err), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
