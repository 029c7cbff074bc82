"""Errors for arith and math ops given values of the wrong type.

xDSL rejects `arith.addf %a, %a : i32` with "Unexpected attribute i32" (from
the parser, for the custom syntax) or "operand 'lhs' at position 0 does not
verify" (from the verifier, for the generic syntax). `wrong_type_message`
says what the op works on and which op to use instead, from the op's name and
the types involved: the ones the parser's message names, or the op's own
operand and result types once it exists (`op_type_message`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from xdsl.ir import Operation

# Float ops and what to use on integers.
FLOAT_OPS = {
    "arith.addf": "arith.addi",
    "arith.subf": "arith.subi",
    "arith.mulf": "arith.muli",
    "arith.divf": "arith.divsi (signed) or arith.divui (unsigned)",
    "arith.remf": "arith.remsi or arith.remui",
    "arith.negf": "arith.subi from a zero constant",
    "arith.maximumf": "arith.maxsi or arith.maxui",
    "arith.maxnumf": "arith.maxsi or arith.maxui",
    "arith.minimumf": "arith.minsi or arith.minui",
    "arith.minnumf": "arith.minsi or arith.minui",
    "arith.cmpf": "arith.cmpi",
}
# Integer ops and what to use on floats (None: no float counterpart).
INT_OPS = {
    "arith.addi": "arith.addf",
    "arith.subi": "arith.subf",
    "arith.muli": "arith.mulf",
    "arith.divsi": "arith.divf",
    "arith.divui": "arith.divf",
    "arith.ceildivsi": "arith.divf and math.ceil",
    "arith.ceildivui": "arith.divf and math.ceil",
    "arith.floordivsi": "arith.divf and math.floor",
    "arith.remsi": "arith.remf",
    "arith.remui": "arith.remf",
    "arith.maxsi": "arith.maximumf",
    "arith.maxui": "arith.maximumf",
    "arith.minsi": "arith.minimumf",
    "arith.minui": "arith.minimumf",
    "arith.cmpi": "arith.cmpf",
    "arith.andi": None,
    "arith.ori": None,
    "arith.xori": None,
    "arith.shli": None,
    "arith.shrsi": None,
    "arith.shrui": None,
}
# math ops on integers; every other math op works on floats.
MATH_INT_OPS = {"math.absi", "math.ctlz", "math.cttz", "math.ctpop", "math.ipowi"}
# Ops whose result type differs from the operands' by design.
_OPERANDS_ONLY = {"arith.cmpf", "arith.cmpi"}

_ELEMENT = re.compile(r"^(?:vector|tensor)<(?:[^<>]*x)?(\w+)>$")


def type_kind(type_text: str) -> str:
    """"float", "int" or "other" for a type's text (vectors and tensors by
    their element type)."""
    text = type_text.strip()
    m = _ELEMENT.match(text)
    if m:
        text = m.group(1)
    if re.fullmatch(r"b?f\d+|tf32|f8\w*", text):
        return "float"
    if re.fullmatch(r"[su]?i\d+|index", text):
        return "int"
    return "other"


def _wants(name: str) -> str | None:
    if name in FLOAT_OPS or (name.startswith("math.") and name not in MATH_INT_OPS):
        return "float"
    if name in INT_OPS or name in MATH_INT_OPS:
        return "int"
    return None


def wrong_type_message(name: str, types: Sequence[str]) -> str | None:
    """What `name` works on and what to use instead, given the types of its
    values (as text); None if `name` is not an arith/math op we know or the
    types look right."""
    wants = _wants(name)
    if wants is None:
        return None
    for got in types:
        kind = type_kind(got)
        if kind == wants:
            continue
        if wants == "float":
            what = f"'{name}' works on floating-point values (f16, f32, f64, or vectors of them), not {got}"
            if kind == "int" and name in FLOAT_OPS:
                return f"{what}; for integers use {FLOAT_OPS[name]}"
            if kind == "int":
                return f"{what}; convert the integer with arith.sitofp (or arith.uitofp) first"
            if got.startswith("memref"):
                return f"{what}; load the elements with memref.load first"
            return f"{what}"
        what = f"'{name}' works on integers and index, not {got}"
        if kind == "float":
            other = INT_OPS.get(name)
            if other is None:
                return f"{what}; bitwise operations on a float need arith.bitcast to an integer first"
            return f"{what}; for floats use {other}"
        if got.startswith("memref"):
            return f"{what}; load the elements with memref.load first"
        return what
    distinct = list(dict.fromkeys(t.strip() for t in types))
    if len(distinct) > 1:
        convert = "arith.extf or arith.truncf" if wants == "float" else "arith.extsi, arith.extui or arith.trunci"
        return (f"'{name}' needs its operands{'' if name in _OPERANDS_ONLY else ' and result'} to have "
                f"one type, got {' and '.join(distinct)}; convert with {convert} first")
    return None


def op_type_message(op: Operation) -> str | None:
    """`wrong_type_message` for an op that exists (a verifier failed)."""
    values = list(op.operands) + ([] if op.name in _OPERANDS_ONLY else list(op.results))
    return wrong_type_message(op.name, [str(v.type) for v in values])


_UNEXPECTED = re.compile(r"Unexpected attribute (.+)$")
_MISMATCH = re.compile(r"attribute (.+) expected from variable '\w+', but got (.+)$")


def parse_type_message(name: str | None, error_text: str) -> str | None:
    """`wrong_type_message` from the parser's constraint message."""
    if name is None:
        return None
    for line in error_text.strip().splitlines():
        if m := _UNEXPECTED.search(line):
            return wrong_type_message(name, [m.group(1)])
        if m := _MISMATCH.search(line):
            return wrong_type_message(name, [m.group(1), m.group(2)])
    return None
