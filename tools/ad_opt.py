"""`ad-opt`: xDSL's opt driver with adpasses' dialects, passes and outputs.

    ad-opt [-p PASSES] [--reverse] [--forward] [--reverse-wrap=SPEC] [--forward-wrap=SPEC]
           [--print-cache-report] [--print-activity]
           [--print-alias] [--emit=mlir|llvm-ir] [--emit-after=STEP] [--opt] [file.mlir]

Reads MLIR from a file or stdin, applies the passes given with `-p` and the
named flags (in the order activity/alias printing, then `-p`, then
`--reverse`, or `--forward`: `ad-reverse`, `ad-forward`), and prints MLIR or, with `--emit=llvm-ir`, the LLVM IR that the
JIT compiles (`--opt`: after LLVM's O3). `ad-reverse` runs as the steps of
the reverse pipeline (adpasses/transforms/reverse_pipeline.py);
`--emit-after=STEP` stops after the first run of a step (or of any pass)
and emits the IR there. Every error is one line
`file:line:col: error: ...` on stderr and exit status 1; `--debug` shows the
Python traceback as well.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from adpasses.core.compile_thread import run_with_stack, too_deep_error
from adpasses.core.context import decode_mlir, make_context, parse_error_message, parse_module
from adpasses.core.diagnostics import CompileError
from adpasses.transforms.build_gradients import CACHE_POLICIES
from adpasses.transforms.registry import AD_PASSES


def _byte_count(text: str) -> int:
    """--tape-limit: bytes as the Python API reads them (`memory_limit`):
    an int >= 0 or a size like 32MB; a negative or malformed one is a usage
    error (a negative one used to switch checkpointing off silently)."""
    from adpasses.api.functions import parse_bytes

    try:
        value = parse_bytes(int(text) if text.strip().lstrip("+-").isdigit() else text, "--tape-limit",
                            "ad-opt")
    except (TypeError, ValueError) as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    assert value is not None
    return value


class ADOptMain(xDSLOptMain):
    version_format = "ad-opt (adpasses) built on xdsl {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="adpasses optimizer: reverse-mode AD on MLIR", args=args)
        # The registry ad-run and compile_module use too (adpasses.core.context).
        self.ctx = make_context(self.args.allow_unregistered_dialect)

    # -- registration --------------------------------------------------------

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in AD_PASSES.items():
            self.register_pass(name, factory)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--reverse",
            action="store_true",
            help="generate gradient functions for every ad.autodiff (pass ad-reverse)",
        )
        arg_parser.add_argument(
            "--forward",
            action="store_true",
            help="generate tangent functions for every ad.fwddiff (pass ad-forward): those "
                 "whose callee holds no ad.autodiff before ad-reverse (reverse over forward), "
                 "the others after it (forward over reverse)",
        )
        arg_parser.add_argument(
            "--reverse-wrap",
            action="append",
            default=[],
            metavar="SPEC",
            help='add a function that calls the gradient of one (implies --reverse), like '
                 '--enzyme-wrap: "fn=f activities=dup,active rets=active name=df with-primal strong-zero" '
                 "(pass ad-wrap; docs/dialect.md)",
        )
        arg_parser.add_argument(
            "--forward-wrap",
            action="append",
            default=[],
            metavar="SPEC",
            help='add a function that calls the tangent of one (implies --forward): '
                 '"fn=f activities=dup,const rets=dup name=tf width=2"',
        )
        arg_parser.add_argument(
            "--lower-ad-ops",
            action="store_true",
            help="last: replace the ad ops left (shadow checks, tapes, ad.keep) by func/arith/memref/"
                 "scf/cf and calls to a small declared runtime, for upstream MLIR (pass ad-lower-ad-ops)",
        )
        arg_parser.add_argument(
            "--print-cache-report",
            action="store_true",
            help="with --reverse: print what the reverse sweep reuses, recomputes, reloads or tapes",
        )
        arg_parser.add_argument(
            "--cache-report-format",
            choices=("text", "json"),
            default=None,
            help="format of the cache report (on stderr; text by default); implies --print-cache-report",
        )
        arg_parser.add_argument(
            "--cache-policy",
            choices=CACHE_POLICIES,
            default="minimal",
            help="with --reverse: min-cut cache minimisation (minimal), the same cut with free "
            "recomputation (min-memory: fewest taped bytes, Enzyme's placement), or tape every "
            "needed in-loop value (tape-all)",
        )
        arg_parser.add_argument(
            "--tape-limit",
            type=_byte_count,
            default=-1,
            metavar="BYTES",
            help="with --reverse: checkpoint the time loops whose tape may exceed BYTES, an int or "
                 "a size like 32MB, 512KiB (ad-checkpoint-loops; docs/cache.md, Checkpointing)",
        )
        arg_parser.add_argument(
            "--snapshots",
            type=int,
            default=None,
            metavar="S",
            help="with --reverse: reverse time loops by the binomial (revolve) schedule holding S "
                 "states (with --tape-limit and S = 0: as many as fit in it)",
        )
        arg_parser.add_argument(
            "--checkpoint-schedule",
            choices=("auto", "sqrt", "revolve"),
            default=None,
            help="with --reverse and --tape-limit: auto (default: no checkpointing, sqrt(steps) segments "
                 "or revolve, whichever fits the limit; a MemoryError when none does), sqrt or revolve",
        )
        arg_parser.add_argument(
            "--no-loop-local",
            action="store_true",
            help="with --reverse: no loop fusion and no loop-local reverse; every loop is "
                 "reversed after the forward sweep (docs/parallel.md)",
        )
        arg_parser.add_argument(
            "--no-scalar-replace",
            action="store_true",
            help="with --reverse: keep small local arrays in memory (no ad-scalar-replace; "
                 "docs/reverse_mode.md)",
        )
        arg_parser.add_argument(
            "--no-interchange-columns",
            action="store_true",
            help="with --reverse: loops down the columns of an array stay as written (no "
                 "ad-interchange-columns; docs/reverse_mode.md)",
        )
        arg_parser.add_argument(
            "--no-activity",
            action="store_true",
            help="with --reverse: treat every float value and memref as active (for comparison)",
        )
        arg_parser.add_argument(
            "--no-simplify",
            action="store_true",
            help="with --reverse: no canonicalize + cse on gradients (the Python API's choice); "
                 "dead code is still removed, keeping its bounds checks",
        )
        arg_parser.add_argument(
            "--print-activity",
            action="store_true",
            help="annotate ops and block arguments with their activity (pass ad-print-activity)",
        )
        arg_parser.add_argument(
            "--print-alias",
            action="store_true",
            help="print alias classes and may-overwrite facts on stderr (pass ad-print-alias)",
        )
        arg_parser.add_argument(
            "--emit",
            choices=("mlir", "llvm-ir"),
            default="mlir",
            help="output MLIR (default) or the LLVM IR that the JIT compiles",
        )
        arg_parser.add_argument(
            "--emit-after",
            metavar="STEP",
            default=None,
            help="stop after the first run of this pass (a step of the reverse pipeline, e.g. "
                 "ad-count-while, or any pass of -p) and emit the IR as it is there",
        )
        arg_parser.add_argument(
            "--opt", action="store_true", help="with --emit=llvm-ir: print the IR after LLVM's O3"
        )
        arg_parser.add_argument(
            "--no-boundscheck",
            action="store_true",
            help="with --emit=llvm-ir: omit the bounds checks on memref.load/store",
        )
        arg_parser.add_argument(
            "--verify-dominance",
            action="store_true",
            help="check after every pass that each value is defined before its uses",
        )
        arg_parser.add_argument(
            "--debug", action="store_true", help="show Python tracebacks for errors"
        )

    def setup_pipeline(self) -> None:
        a = self.args
        passes: list[str] = []
        report_flag = "--print-cache-report" if a.print_cache_report else "--cache-report-format"
        # Asking for a report's format asks for the report (it was ignored
        # without --print-cache-report).
        a.print_cache_report = a.print_cache_report or a.cache_report_format is not None
        a.cache_report_format = a.cache_report_format or "text"
        if a.print_activity:
            passes.append("ad-print-activity")
        if a.print_alias:
            passes.append("ad-print-alias")
        if a.passes:
            passes.append(a.passes)
        passes += _wrap_passes(a.reverse_wrap, "reverse") + _wrap_passes(a.forward_wrap, "forward")
        a.reverse = a.reverse or bool(a.reverse_wrap)
        a.forward = a.forward or bool(a.forward_wrap)
        if a.reverse or a.forward:
            options = [f'cache-policy="{a.cache_policy}"']
            if a.print_cache_report:
                options.append(f'report="{a.cache_report_format}"')
            if a.no_activity:
                options.append("activity=false")
            if a.no_simplify:
                options.append("simplify=false")
            if a.tape_limit >= 0:
                options.append(f"tape-limit={a.tape_limit}")
            if a.snapshots is not None or a.checkpoint_schedule == "revolve":
                options.append("checkpoint-schedule=revolve")
            elif a.checkpoint_schedule == "sqrt":
                options.append("checkpoint-schedule=sqrt")
            if a.snapshots is not None:  # given: checked by ad-checkpoint-loops (>= 1, or 0 with --tape-limit)
                options.append(f"snapshots={a.snapshots}")
            if a.no_loop_local:
                options.append("loop-local=false")
            if a.no_scalar_replace:
                options.append("scalar-replace=false")
            if a.no_interchange_columns:
                options.append("interchange-columns=false")
            forward = ["simplify=false"] if a.no_simplify else []
            if a.forward:
                # Before ad-reverse, the requests that hold no ad.autodiff: a
                # function ad.autodiff differentiates then calls plain tangent
                # functions, inlined and reversed like any callee (reverse
                # over forward).
                passes.append("ad-forward{" + " ".join(forward + ["inner=true"]) + "}")
            passes.append("ad-reverse{" + " ".join(options) + "}")
            if a.forward:
                # After ad-reverse: a gradient that a function calls is then
                # a plain function, inlined and differentiated like any callee.
                if a.print_cache_report:  # what the tangent sweep tapes, beside the gradients' reports
                    forward.append(f'report="{a.cache_report_format}"')
                passes.append("ad-forward" + ("{" + " ".join(forward) + "}" if forward else ""))
            # Last, so that no pass after it can remove a check it relies on.
            passes.append("ad-elide-shadow-checks")
        elif a.print_cache_report:
            print(f"ad-opt: warning: {report_flag} needs --reverse (or --forward): no report is printed",
                  file=sys.stderr)
        if a.lower_ad_ops:
            passes.append("ad-lower-ad-ops")
        a.passes = ",".join(passes)
        super().setup_pipeline()
        steps, inner = _expand_reverse(self.pipeline.passes)
        if a.emit_after is not None:
            steps = _until(steps, a.emit_after)
        # Verify between passes with our one-line diagnostics (xDSL's own
        # verifier dumps the whole module), then run xDSL's callback. Inside
        # an expanded ad-reverse, only after its last step (or where the
        # pipeline stops): each verification walks the whole module, and
        # ten of them doubled the time of deep nests. Steps named one by one
        # with -p are verified after each.
        callback = self.pipeline.callback
        verify = not a.disable_verify
        dominance = a.verify_dominance

        def checking_callback(prev, module, nxt):  # type: ignore[no-untyped-def]
            from adpasses.core.verify import check_dominance, verify_module

            within = prev is not None and nxt is not None and id(prev) in inner
            if verify and not within:
                verify_module(module)
            if dominance:
                check_dominance(module)
            if callback is not None:
                # xDSL's callback verifies too, unless told not to.
                a.disable_verify = not verify or within
                callback(prev, module, nxt)
                a.disable_verify = not verify

        self.pipeline = type(self.pipeline)(steps, checking_callback)

    # -- input and output ----------------------------------------------------

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, offset: int = 0
    ) -> ModuleOp | None:
        if file_extension != "mlir":
            return super().parse_chunk(chunk, file_extension, offset)
        text = chunk.read()
        name = self.args.input_file or "<stdin>"
        if isinstance(text, bytes):
            text = decode_mlir(text, name, offset)
        return parse_module(text, name, self.ctx, line_offset=offset)

    def run(self) -> None:
        """xDSL's, except `--verify-diagnostics` on an input with
        `expected-error` annotations: MLIR's meaning (tools/verify_diagnostics.py)."""
        if not self.args.verify_diagnostics:
            return super().run()
        from io import BytesIO

        from adpasses.tools.verify_diagnostics import check_part, expectations, has_expectations

        chunks, extension = self.prepare_input()
        parts = []
        for chunk, offset in chunks:
            parts.append((chunk.read(), offset))
            chunk.close()
        if not has_expectations(b"".join(data for data, _ in parts).decode("utf-8", "replace")):
            self.prepare_input = lambda: ([(BytesIO(d), o) for d, o in parts], extension)  # type: ignore[method-assign]
            return super().run()
        name = self.args.input_file or "<stdin>"
        problems: list[str] = []
        for data, offset in parts:
            def run_part(data: bytes = data, offset: int = offset) -> None:
                module = self.parse_chunk(BytesIO(data), extension, offset)
                if module is not None:
                    self.apply_passes(module)
                    self.output_resulting_program(module)

            expected = expectations(data.decode("utf-8", "replace"), offset)
            problems += check_part(name, expected, run_part, _diagnostic)
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            raise SystemExit(1)
        return None

    def output_resulting_program(self, prog: ModuleOp) -> str:
        if self.args.emit == "llvm-ir":
            from adpasses.lowering import emit_llvm_ir

            text = emit_llvm_ir(prog, boundscheck=not self.args.no_boundscheck)
            if not self.args.opt:
                return text
            from adpasses.native.llvm_jit import optimized_module

            return str(optimized_module(text))
        return super().output_resulting_program(prog)


def _wrap_passes(specs: Sequence[str], mode: str) -> list[str]:
    """`--reverse-wrap` / `--forward-wrap` values as `ad-wrap{...}` pipeline
    elements (their fields checked here, with a one-line error)."""
    from adpasses.transforms.wrap import parse_wrap_spec

    out = []
    for spec in specs:
        p = parse_wrap_spec(spec, mode)
        out.append(f'ad-wrap{{fn="{p.fn}" mode="{p.mode}" activities="{p.activities}" rets="{p.rets}" '
                   f'wrapper="{p.wrapper}" with-primal={str(p.with_primal).lower()} width={p.width} '
                   f'strong-zero={str(p.strong_zero).lower()} split={str(p.split).lower()}}}')
    return out


def _expand_reverse(passes: Sequence[ModulePass]) -> tuple[tuple[ModulePass, ...], set[int]]:
    """`ad-reverse` as the steps of the reverse pipeline it runs
    (adpasses/transforms/reverse_pipeline.py), so that the driver can stop
    after any; and the ids of the steps that are not the last of their
    ad-reverse."""
    out: list[ModulePass] = []
    inner: set[int] = set()
    for p in passes:
        if p.name == "ad-reverse":
            steps = p.steps()  # type: ignore[attr-defined]
            inner.update(id(s) for s in steps[:-1])
            out.extend(steps)
        else:
            out.append(p)
    return tuple(out), inner


def _until(passes: Sequence[ModulePass], step: str) -> tuple[ModulePass, ...]:
    """The passes up to and including the first named `step`."""
    names = [p.name for p in passes]
    if step not in names:
        listed = ", ".join(dict.fromkeys(names)) or "none"
        raise CompileError(f"--emit-after={step}: no pass of that name runs (the passes: {listed})")
    return tuple(passes[: names.index(step) + 1])


def _diagnostic(err: BaseException) -> str:
    """One line for any error ad-opt reports."""
    if isinstance(err, CompileError):
        return str(err)
    if isinstance(err, RecursionError):
        return str(too_deep_error())
    if isinstance(err, ParseError):
        loc = err.span.get_location()
        return f"{loc.file}:{loc.line + err.span.line_offset}:{loc.col}: error: {parse_error_message(err)}"
    if isinstance(err, OSError) and err.filename is not None:
        return f"error: cannot read '{err.filename}': {err.strerror}"
    if isinstance(err, DiagnosticException):
        text = str(err.args[0]) if err.args else type(err).__name__
        return f"error: {text.strip().splitlines()[0]}"
    text = str(err).strip().splitlines()
    if isinstance(err, _INTERNAL):
        # Not a complaint about the input: a bug of ours or of xDSL.
        return (f"error: internal error ({type(err).__name__}{': ' + text[0] if text else ''}); "
                "please report it with the input and the output of --debug")
    return f"error: {text[0] if text else type(err).__name__}"


# Exceptions that never describe a problem of the input (xDSL reports bad
# pipelines and options as ValueError, bad IR as DiagnosticException).
_INTERNAL = (AttributeError, AssertionError, NotImplementedError, KeyError, NameError,
             UnboundLocalError, LookupError, RuntimeError, TypeError)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    try:
        # Parsing, passes and printing recurse as deep as the input nests.
        run_with_stack(lambda: ADOptMain(args=argv).run())
    except SystemExit:
        raise
    except BrokenPipeError:
        return 0
    except Exception as err:  # noqa: BLE001 - the one place that turns errors into diagnostics
        if debug:
            raise
        print(_diagnostic(err), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
