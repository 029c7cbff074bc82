"""The reverse pipeline (adpasses/transforms/reverse_pipeline.py): one list
of steps that `ad-opt --reverse`, `ad-opt -p ad-reverse`, the steps run one
by one with `-p`, and `differentiate` (the Python API) all run.

- each step is a registered pass, and the spec of the steps parses back to
  the same steps;
- for every lit input that asks for derivatives, with each option, the
  steps run by `-p` print exactly what `--reverse` prints (errors included);
- `differentiate` builds the same gradient as `ad-reverse` and leaves no
  mark behind;
- the overrun reproducer still raises IndexError with canonicalize, cse or
  dce run between any two steps after the gradient is built, or after the
  last (issue 14, "Done when").
"""

from __future__ import annotations

import contextlib
import glob
import io
import os
import re

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.passes import PassPipeline
from xdsl.printer import Printer

from adpasses.core.context import parse_module, shared_context
from adpasses.dialects.ad import GRADIENT_OF_ATTR
from adpasses.native.llvm_jit import compile_module
from adpasses.tools.ad_opt import main as ad_opt
from adpasses.transforms.registry import AD_PASSES
from adpasses.transforms.reverse_pass import ReversePass, differentiate
from adpasses.transforms.reverse_pipeline import ReverseOptions, reverse_spec, reverse_steps

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIT = os.path.join(ROOT, "test", "lit")
OVERRUN = os.path.join(ROOT, "test", "safety", "inputs", "overrun.mlir")

OPTIONS = {
    "default": (ReverseOptions(), []),
    "no-simplify": (ReverseOptions(simplify=False), ["--no-simplify"]),
    "tape-all": (ReverseOptions(cache_policy="tape-all"), ["--cache-policy=tape-all"]),
    "no-activity": (ReverseOptions(activity=False), ["--no-activity"]),
    "no-loop-local": (ReverseOptions(loop_local=False), ["--no-loop-local"]),
    "no-scalar-replace": (ReverseOptions(scalar_replace=False), ["--no-scalar-replace"]),
    "no-interchange-columns": (ReverseOptions(interchange_columns=False), ["--no-interchange-columns"]),
}


def _passes() -> dict:
    from xdsl.transforms import get_all_passes

    table = dict(get_all_passes())
    table.update(AD_PASSES)
    return table


PASSES = _passes()


# -- the steps -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(OPTIONS))
def test_every_step_is_a_registered_pass_and_the_spec_parses_back(name):
    options, _ = OPTIONS[name]
    steps = reverse_steps(options)
    for step in steps:
        assert AD_PASSES[step.name]() is type(step), step.name
    assert PassPipeline.parse_spec(PASSES, reverse_spec(options)).passes == steps
    # ad-reverse is the same steps, up to (not including) the elision
    pass_ = ReversePass(options.cache_policy, options.activity, "", options.lower_tapes, options.simplify,
                        loop_local=options.loop_local, scalar_replace=options.scalar_replace,
                        interchange_columns=options.interchange_columns)
    assert pass_.steps() == steps[:-1]
    assert steps[-1].name == "ad-elide-shadow-checks"


def test_the_steps_follow_the_options():
    names = [s.name for s in reverse_steps(ReverseOptions())]
    assert names == ["ad-clone-primals", "ad-inline-calls", "ad-lower-affine", "ad-lower-linalg",
                     "ad-expand-upstream-ops", "ad-scalar-replace", "ad-interchange-columns", "ad-count-while",
                     "ad-fuse-loops",
                     "ad-build-gradients", "ad-lower-tapes", "ad-dead-forward", "ad-simplify",
                     "ad-dead-forward", "ad-split-sweeps", "ad-drop-gradient-marks", "ad-elide-shadow-checks"]
    lean = ReverseOptions(simplify=False, lower_tapes=False, elide_checks=False, loop_local=False,
                          scalar_replace=False, interchange_columns=False)
    assert [s.name for s in reverse_steps(lean)] == [
        "ad-clone-primals", "ad-inline-calls", "ad-lower-affine", "ad-lower-linalg",
                     "ad-expand-upstream-ops", "ad-count-while",
        "ad-build-gradients", "ad-dead-forward", "ad-split-sweeps", "ad-drop-gradient-marks"]


# -- step by step = --reverse --------------------------------------------------------------------

def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = ad_opt(args)
        except SystemExit as e:  # argparse
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def _inputs() -> list[str]:
    """Every lit input (and safety input) whose code asks for derivatives."""
    found = []
    paths = glob.glob(os.path.join(LIT, "**", "*.mlir"), recursive=True)
    paths += glob.glob(os.path.join(ROOT, "test", "safety", "inputs", "*.mlir"))
    for path in sorted(paths):
        with open(path, encoding="utf-8", errors="replace") as f:
            code = re.sub(r"//.*", "", f.read())
        if "ad.autodiff" in code:
            found.append(os.path.relpath(path, ROOT))
    return found


INPUTS = _inputs()


def test_inputs_found():
    assert len(INPUTS) >= 30, INPUTS


@pytest.mark.parametrize("name", list(OPTIONS))
@pytest.mark.parametrize("path", INPUTS)
def test_steps_one_by_one_print_what_reverse_prints(path, name):
    options, flags = OPTIONS[name]
    path = os.path.join(ROOT, path)
    whole = _run(["--reverse", *flags, path])
    steps = _run(["-p", reverse_spec(options), path])
    assert steps == whole


@pytest.mark.parametrize("path", ["test/lit/reverse/calls.mlir", "test/lit/safety/affine.mlir"])
def test_steps_one_by_one_give_the_same_llvm_ir(path):
    path = os.path.join(ROOT, path)
    whole = _run(["--reverse", "--emit=llvm-ir", path])
    assert whole[0] == 0, whole
    assert _run(["-p", reverse_spec(ReverseOptions()), "--emit=llvm-ir", path]) == whole


# -- differentiate -----------------------------------------------------------------------------

def _text(op) -> str:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue()


@pytest.mark.parametrize("simplify", [True, False])
def test_differentiate_builds_what_ad_reverse_builds(simplify):
    with open(OVERRUN) as f:
        text = f.read()
    options = ReverseOptions(simplify=simplify)
    reversed_ = parse_module(text, OVERRUN)
    PassPipeline.parse_spec(PASSES, reverse_spec(options)).apply(shared_context(), reversed_)
    expected = next(op for op in reversed_.ops
                    if isinstance(op, func.FuncOp) and op.sym_name.data == "overrun_grad_d_a")

    module = parse_module(text, OVERRUN)
    primal_before = _text(module.ops.first)
    g = differentiate(module, "overrun", ["dup"], ["active"], options=options)
    assert g.name == "overrun_grad_d_a"
    assert _text(g.function) == _text(expected)
    assert _text(module.ops.first) == primal_before  # the user's function as written
    assert not any(GRADIENT_OF_ATTR in op.attributes for op in module.ops)
    assert "overrun_grad_d_a" in str(g.cache_report)
    assert "%x" in g.activity_report


# -- the overrun reproducer, with xDSL passes between the steps -----------------------------------

def _between(options: ReverseOptions, extra: str) -> list[str]:
    """The steps with `extra` after each step from ad-build-gradients on."""
    from adpasses.transforms.reverse_pipeline import step_spec

    steps = [step_spec(s) for s in reverse_steps(options)]
    first = next(i for i, s in enumerate(steps) if s.startswith("ad-build-gradients"))
    return [",".join([*steps[: k + 1], extra, *steps[k + 1:]]) for k in range(first, len(steps))]


def _overrun_outcome(spec: str) -> None:
    with open(OVERRUN) as f:
        module = parse_module(f.read(), OVERRUN)
    PassPipeline.parse_spec(PASSES, spec).apply(shared_context(), module)
    grad = compile_module(module)["overrun_grad_d_a"]
    big, bigd = np.arange(8, dtype=np.float64), np.zeros(8)
    bigd[5] = 100.0
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 5"):
        grad(big[:5], bigd[:5], 1.0)
    assert bigd[5] == 100.0, f"{spec}: the gradient wrote past its shadow"


@pytest.mark.parametrize("simplify", [True, False], ids=["simplify", "no-simplify"])
@pytest.mark.parametrize("extra", ["canonicalize", "cse", "dce"])
def test_overrun_raises_with_xdsl_passes_between_any_steps(extra, simplify):
    specs = _between(ReverseOptions(simplify=simplify), extra)
    assert len(specs) >= 5
    for spec in specs:
        _overrun_outcome(spec)
