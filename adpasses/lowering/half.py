"""The compiler-rt half-precision conversions, for code that uses f16.

LLVM lowers `fptrunc double to half` (and, on CPUs without F16C, every
f16 <-> f32 conversion) to calls of `__truncdfhf2`, `__truncsfhf2` and
`__extendhfsf2`, which live in compiler-rt, not in a Python process: MCJIT
would jump to address 0. `half_runtime_module()` defines them with integer
operations only (so their own code needs no such call), rounding to nearest
even exactly like IEEE 754; `adpasses.native.runtime` compiles it once per process
and hands the addresses to the JIT linker.
"""

from __future__ import annotations

from llvmlite import ir

I1, I16, I32, I64 = ir.IntType(1), ir.IntType(16), ir.IntType(32), ir.IntType(64)
HALF, FLOAT, DOUBLE = ir.HalfType(), ir.FloatType(), ir.DoubleType()
SYMBOLS = ("__truncdfhf2", "__truncsfhf2", "__extendhfsf2")


def _c(v: int, t: ir.Type = I64) -> ir.Constant:
    return ir.Constant(t, v)


def _round_shift(b: ir.IRBuilder, mant: ir.Value, shift: ir.Value) -> ir.Value:
    """mant >> shift, rounded to nearest, ties to even (shift in 1..63)."""
    kept = b.lshr(mant, shift)
    rest = b.and_(mant, b.sub(b.shl(_c(1), shift), _c(1)))
    half = b.shl(_c(1), b.sub(shift, _c(1)))
    above = b.icmp_unsigned(">", rest, half)
    tie_odd = b.and_(b.icmp_unsigned("==", rest, half), b.trunc(kept, I1))
    return b.add(kept, b.zext(b.or_(above, tie_odd), I64))


def _double_to_half_bits(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """IEEE binary16 bits (as i64) of the double `x`, rounded to nearest even."""
    bits = b.bitcast(x, I64)
    sign = b.shl(b.lshr(bits, _c(63)), _c(15))
    exp = b.and_(b.lshr(bits, _c(52)), _c(0x7FF))
    mant = b.and_(bits, _c((1 << 52) - 1))
    e = b.sub(exp, _c(1023))
    # NaN keeps a quiet payload bit; infinity and overflow give infinity.
    is_special = b.icmp_unsigned("==", exp, _c(0x7FF))
    nan = b.and_(is_special, b.icmp_unsigned("!=", mant, _c(0)))
    special = b.select(nan, _c(0x7E00), _c(0x7C00))
    # Normal results: 5-bit exponent, 52 -> 10 mantissa bits; a rounding
    # carry moves into the exponent (up to infinity) by itself.
    normal = _round_shift(b, b.or_(b.shl(b.add(e, _c(15)), _c(52)), mant), _c(42))
    # Subnormal results (e < -14): the significand with its implicit bit,
    # shifted further; beyond 53 extra places everything rounds to zero.
    shift = b.sub(_c(42 - 14), e)
    capped = b.select(b.icmp_signed(">", shift, _c(62)), _c(62), shift)
    subnormal = _round_shift(b, b.or_(mant, _c(1 << 52)), capped)
    finite = b.select(b.icmp_signed("<", e, _c(-14)), subnormal, normal)
    finite = b.select(b.icmp_signed(">", e, _c(15)), _c(0x7C00), finite)
    zero = b.icmp_unsigned("==", exp, _c(0))  # zero and double subnormals -> +-0
    magnitude = b.select(is_special, special, b.select(zero, _c(0), finite))
    return b.or_(sign, magnitude)


def _define_trunc(module: ir.Module, name: str, source: ir.Type) -> None:
    fn = ir.Function(module, ir.FunctionType(HALF, [source]), name)
    b = ir.IRBuilder(fn.append_basic_block())
    x = fn.args[0] if source is DOUBLE else b.fpext(fn.args[0], DOUBLE)  # exact
    b.ret(b.bitcast(b.trunc(_double_to_half_bits(b, x), I16), HALF))


def _define_extend(module: ir.Module) -> None:
    """half -> float is exact: rebuild the float's fields from the half's."""
    fn = ir.Function(module, ir.FunctionType(FLOAT, [HALF]), "__extendhfsf2")
    b = ir.IRBuilder(fn.append_basic_block())
    h = b.zext(b.bitcast(fn.args[0], I16), I32)
    sign = b.shl(b.lshr(h, _c(15, I32)), _c(31, I32))
    exp = b.and_(b.lshr(h, _c(10, I32)), _c(0x1F, I32))
    mant = b.and_(h, _c(0x3FF, I32))
    normal = b.or_(b.shl(b.add(exp, _c(127 - 15, I32)), _c(23, I32)), b.shl(mant, _c(13, I32)))
    special = b.or_(_c(0x7F800000, I32), b.shl(mant, _c(13, I32)))
    # Subnormal halves are mant * 2^-24: exact in float arithmetic.
    scaled = b.fmul(b.uitofp(mant, FLOAT), ir.Constant(FLOAT, 2.0**-24))
    subnormal = b.bitcast(scaled, I32)
    magnitude = b.select(b.icmp_unsigned("==", exp, _c(0, I32)), subnormal,
                         b.select(b.icmp_unsigned("==", exp, _c(0x1F, I32)), special, normal))
    b.ret(b.bitcast(b.or_(sign, magnitude), FLOAT))


def half_runtime_module() -> ir.Module:
    module = ir.Module(name="adpasses_half")
    _define_trunc(module, "__truncdfhf2", DOUBLE)
    _define_trunc(module, "__truncsfhf2", FLOAT)
    _define_extend(module)
    return module
