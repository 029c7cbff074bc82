"""What ad-opt writes is read by upstream MLIR: every lit test's input, run
through `ad-opt --reverse --forward --lower-ad-ops`, parses and verifies
with upstream MLIR's own parser and verifier (the Python bindings in
jaxlib: `pip install -e ".[upstream]"`). Skipped, with the reason, when
jaxlib is absent (docs/mlir_interop.md).

Only `printf.*` and `linalg.*` may stay unknown to jaxlib's upstream MLIR
(NOT_IN_JAXLIB): those modules are checked in generic form with
unregistered ops allowed, and must hold no `ad` op or type.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ir = pytest.importorskip(
    "jaxlib.mlir.ir", reason="jaxlib (upstream MLIR's Python bindings) is not installed: "
    'pip install -e ".[upstream]" to check our output against upstream MLIR')
_jax_mlir_ext = pytest.importorskip("jaxlib.mlir._mlir_libs._jax_mlir_ext",
                                    reason="this jaxlib has no _jax_mlir_ext dialect registry")

from adpasses.tools.ad_opt import main as ad_opt  # noqa: E402

LIT = Path(__file__).parent / "lit"
INPUTS = sorted(p for p in LIT.rglob("*.mlir") if "Inputs" not in p.parts and "Output" not in p.parts)


def _context(allow_unregistered: bool):  # type: ignore[no-untyped-def]
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx = ir.Context()
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    ctx.allow_unregistered_dialects = allow_unregistered
    return ctx


def _ad_opt(path: Path, *flags: str, passes: tuple[str, ...] = ("--reverse", "--forward", "--lower-ad-ops")) -> str | None:
    """ad-opt's output, or None when ad-opt rejects the input (a negative
    test: its error is what that lit test checks)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = ad_opt([str(path), "--split-input-file", *passes, *flags])
        except SystemExit as exit_:
            code = exit_.code
    return out.getvalue() if code in (0, None) else None


def _upstream_verifies(text: str, allow_unregistered: bool) -> None:
    for chunk in re.split(r"^// -----\s*$", text, flags=re.M):
        if not chunk.strip():
            continue
        with _context(allow_unregistered):
            module = ir.Module.parse(chunk)
            assert module.operation.verify()


def _skip_if_the_input_is_invalid_upstream(path: Path) -> None:
    """Some inputs (written by the fuzzer) use types xDSL accepts and
    upstream does not (a reinterpret_cast to an identity layout with a
    dynamic offset): then the output cannot be valid either."""
    generic = _ad_opt(path, "--print-op-generic", passes=())
    assert generic is not None
    try:
        _upstream_verifies(generic, allow_unregistered=True)
    except ir.MLIRError as err:
        first = str(err).splitlines()[1] if len(str(err).splitlines()) > 1 else str(err)
        pytest.skip(f"the input itself is not valid upstream MLIR: {first.strip()}")


NOT_IN_JAXLIB = ("printf", "linalg")
"""Dialects upstream MLIR has that jaxlib's registry does not load:
xDSL's `printf` (the lit drivers' printing) and `linalg` (the frontend's
array expressions and matrix products, left as they are in functions that
are not differentiated). Modules holding them are checked in generic form
with unregistered ops allowed."""

OUR_OWN = ("special",)
"""adpasses' own dialects with no upstream counterpart (`special.lgamma`,
`special.digamma`, ...: docs/mlir_interop.md): upstream MLIR reads them as
unregistered ops, so they are checked like NOT_IN_JAXLIB."""


@pytest.mark.parametrize("path", INPUTS, ids=[str(p.relative_to(LIT)) for p in INPUTS])
def test_upstream_mlir_reads_our_output(path: Path) -> None:
    try:
        _check_output(path)
    except ir.MLIRError:
        _skip_if_the_input_is_invalid_upstream(path)
        raise


def _check_output(path: Path) -> None:
    text = _ad_opt(path)
    if text is None:
        pytest.skip("ad-opt rejects this input (a negative lit test)")
    if not any(f"{d}." in text for d in (*NOT_IN_JAXLIB, *OUR_OWN)):
        _upstream_verifies(text, allow_unregistered=False)  # our custom form, every op known
        return
    generic = _ad_opt(path, "--print-op-generic")
    assert generic is not None
    unknown = set(re.findall(r'"([a-z_]+)\.[a-z_.]+"\(', generic)) - {
        "builtin", "func", "arith", "math", "memref", "scf", "cf", "affine", "llvm", "vector", "ub",
        *NOT_IN_JAXLIB, *OUR_OWN}
    assert not unknown, f"dialects upstream MLIR does not know in the output: {unknown}"
    assert '"ad.' not in generic and "!ad." not in generic
    _upstream_verifies(generic, allow_unregistered=True)


def test_the_lit_suite_is_mostly_checked() -> None:
    """Most lit inputs differentiate (so the test above checks something)."""
    checked = sum(_ad_opt(p) is not None for p in INPUTS[::7])
    assert checked >= len(INPUTS[::7]) // 2
