"""The alias analysis's answers through its Python API.

A wrong "not overwritten" makes gradients silently wrong (the reverse sweep
would reload a value that changed), so each case that must not clobber has
a neighbour that must, differing in one index or attribute: a test that
only checked "no clobber" could pass with an analysis that proves too much.
"""

from __future__ import annotations

import io

import pytest
from xdsl.dialects import func, memref
from xdsl.ir import Operation, SSAValue
from xdsl.printer import Printer

from adpasses.analysis.affine_index import Affine, Fresh, affine_form, can_be_zero
from adpasses.analysis.alias import AliasAnalysis, AliasKind, printed_names
from adpasses.core.context import parse_module
from adpasses.analysis.memref_access import ObjectKind, is_injective

PRELUDE = """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f64
"""


class Case:
    """One function parsed from `body`, with its loads and values by name."""

    def __init__(self, body: str, args: str = "%x: memref<?xf64>, %n: index", extra: str = ""):
        text = f"func.func @f({args}) {{\n{PRELUDE}{body}\n  func.return\n}}\n{extra}"
        module = parse_module(text, "t.mlir")
        self.function = next(op for op in module.ops if isinstance(op, func.FuncOp))
        self.aa = AliasAnalysis(self.function)
        self.values: dict[str, SSAValue] = {
            name[1:]: value for value, name in printed_names(self.function).items()
        }
        self.loads = {
            op.res.name_hint: op for op in self.function.walk() if isinstance(op, memref.LoadOp)
        }

    def clobbers(self, load: str) -> list[str]:
        return [c.reason for c in self.aa.clobbers(self.loads[load])]

    def writes(self) -> list[Operation]:
        return self.aa.writes()


def loop(body: str, lb: str = "%c0", ub: str = "%n", step: str = "%c1", iv: str = "%i") -> str:
    return f"  scf.for {iv} = {lb} to {ub} step {step} {{\n{body}\n  }}"


# -- the expected answers of the brief ------------------------------------------------


def test_strided_difference_without_writes_is_never_clobbered():
    case = Case(
        """
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %ip = arith.addi %i, %c1 : index
    %a = memref.load %x[%ip] : memref<?xf64>
    %b = memref.load %x[%i] : memref<?xf64>
    %d = arith.subf %a, %b : f64
    %s2 = arith.addf %acc, %d : f64
    scf.yield %s2 : f64
  }"""
    )
    assert case.writes() == []
    assert case.clobbers("a") == [] and case.clobbers("b") == []


@pytest.mark.parametrize("update", ["arith.mulf %a, %a", "arith.addf %a, %one"])
def test_in_place_update_clobbers_its_own_load(update):
    case = Case(
        "  %one = arith.constant 1.0 : f64\n"
        + loop(
            f"""
    %a = memref.load %x[%i] : memref<?xf64>
    %p = {update} : f64
    memref.store %p, %x[%i] : memref<?xf64>"""
        )
    )
    [reason] = case.clobbers("a")
    assert "later in the same iteration" in reason and "writes the same element %x[%i]" in reason
    store = case.writes()[0]
    assert case.aa.may_overlap(store, case.loads["a"]).kind is AliasKind.MUST_ALIAS


COPY = loop(
    """
    %a = memref.load %x[%i] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>"""
)


@pytest.mark.parametrize(
    "x_attr,y_attr,clobbered",
    [
        ("", "", True),
        (" {ad.noalias}", "", False),
        ("", " {llvm.noalias}", False),
        (" {llvm.noalias}", " {ad.noalias}", False),
    ],
)
def test_copy_between_arguments_depends_on_noalias(x_attr, y_attr, clobbered):
    case = Case(COPY, f"%x: memref<?xf64>{x_attr}, %y: memref<?xf64>{y_attr}, %n: index")
    found = case.clobbers("a")
    assert bool(found) is clobbered
    if clobbered:
        assert "arguments %y and %x may alias (no noalias attribute)" in found[0]
        assert len(case.aa.classes()) == 1
    else:
        assert len(case.aa.classes()) == 2
    result = case.aa.alias(case.values["x"], case.values["y"])
    assert result.kind is (AliasKind.MAY_ALIAS if clobbered else AliasKind.NO_ALIAS)


def test_distinct_allocations_and_arguments_do_not_alias():
    case = Case(
        """
  %y = memref.alloc(%n) : memref<?xf64>
  %w = memref.alloc(%n) : memref<?xf64>
"""
        + loop(
            """
    %a = memref.load %y[%i] : memref<?xf64>
    memref.store %a, %w[%i] : memref<?xf64>
    memref.store %a, %x[%i] : memref<?xf64>"""
        )
    )
    assert case.clobbers("a") == []
    v = case.values
    assert case.aa.alias(v["y"], v["w"]).kind is AliasKind.NO_ALIAS
    assert case.aa.alias(v["y"], v["x"]).kind is AliasKind.NO_ALIAS
    assert case.aa.underlying(v["y"]).kind is ObjectKind.ALLOCATION
    # The same loop storing into %y itself is clobbered: the allocation is
    # not "never written", it is just separate from the others.
    same = Case(
        "  %y = memref.alloc(%n) : memref<?xf64>\n"
        + loop(
            """
    %a = memref.load %y[%i] : memref<?xf64>
    memref.store %a, %y[%i] : memref<?xf64>"""
        )
    )
    assert same.clobbers("a")


VIEWS = """
  %lo = memref.subview %buf[0] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1]>>
  %hi = memref.subview %buf[4] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 4>>
  %mid = memref.subview %buf[2] [4] [1] : memref<8xf64> to memref<4xf64, strided<[1], offset: 2>>
"""
LO, HI, MID = (
    "memref<4xf64, strided<[1]>>",
    "memref<4xf64, strided<[1], offset: 4>>",
    "memref<4xf64, strided<[1], offset: 2>>",
)


def views_case(load: str, store: str) -> Case:
    body = loop(
        f"""
    %a = memref.load {load}[%i] : {dict(lo=LO, hi=HI, mid=MID)[load[1:]]}
    memref.store %a, {store}[%i] : {dict(lo=LO, hi=HI, mid=MID)[store[1:]]}""",
        ub="%c4",
    )
    return Case(VIEWS + body, "%buf: memref<8xf64>")


def test_disjoint_subviews_do_not_alias():
    case = views_case("%lo", "%hi")
    assert case.clobbers("a") == []
    result = case.aa.alias(case.values["lo"], case.values["hi"])
    assert result.kind is AliasKind.NO_ALIAS
    assert result.reason == "disjoint static subviews of %buf [0,4) and [4,8)"


def test_overlapping_subviews_may_alias_and_clobber_in_the_right_direction():
    case = views_case("%mid", "%lo")
    assert case.aa.alias(case.values["lo"], case.values["mid"]).kind is AliasKind.MAY_ALIAS
    # mid[i] = buf[i+2] is written by lo[j] = buf[j] two iterations later.
    [reason] = case.clobbers("a")
    assert "in a later iteration of the scf.for" in reason
    # lo[i] = buf[i] would only be written by mid[i-2], two iterations earlier.
    assert views_case("%lo", "%mid").clobbers("a") == []


EULER = """
  scf.for %t = %c0 to %steps step %c1 {
    scf.for %i = %c1 to %n step %c1 {
      %u0 = memref.load %u[%i] : memref<?xf64>
      %im = arith.subi %i, %c1 : index
      %u1 = memref.load %u[%im] : memref<?xf64>
      %sq = arith.mulf %u0, %u0 : f64
      %cube = arith.mulf %sq, %u0 : f64
      %k = arith.constant 0.1 : f64
      %ku = arith.mulf %k, %u1 : f64
      %f = arith.subf %ku, %cube : f64
      memref.store %f, %du[%i] : memref<?xf64>
    }
    scf.for %j = %c1 to %n step %c1 {
      %u2 = memref.load %u[%j] : memref<?xf64>
      %g = memref.load %du[%j] : memref<?xf64>
      %s = arith.mulf %dt, %g : f64
      %v = arith.addf %u2, %s : f64
      memref.store %v, %u[%j] : memref<?xf64>
    }
  }"""


@pytest.mark.parametrize("noalias", ["", " {ad.noalias}"])
def test_explicit_euler(noalias):
    args = f"%u: memref<?xf64>{noalias}, %du: memref<?xf64>{noalias}, "
    args += "%n: index, %steps: index, %dt: f64"
    case = Case(EULER, args)
    store_du, store_u = case.writes()
    for load in ("u0", "u1"):
        found = {c.op: c.reason for c in case.aa.clobbers(case.loads[load])}
        assert store_u in found and "later in the same iteration" in found[store_u]
        assert (store_du in found) is (noalias == "")
    found = {c.op: c.reason for c in case.aa.clobbers(case.loads["u2"])}
    assert "writes the same element %u[%j]" in found[store_u]
    found = {c.op: c.reason for c in case.aa.clobbers(case.loads["g"])}
    assert "in a later iteration of the scf.for at t.mlir:10:3" in found[store_du]
    assert (store_u in found) is (noalias == "")


def test_store_at_zero_after_the_loop_clobbers_a_loop_load():
    body = loop("    %a = memref.load %x[%i] : memref<?xf64>")
    body += "\n  memref.store %z, %x[%c0] : memref<?xf64>"
    [reason] = Case(body).clobbers("a")
    assert "(later): writes %x[0], which may be %x[%i]" in reason
    # With constant bounds [1, 8) the loop never reads x[0].
    bounded = body.replace("%c0 to %n", "%c1 to %c8")
    assert Case("  %c8 = arith.constant 8 : index\n" + bounded).clobbers("a") == []


def test_constant_indices():
    case = Case(
        """
  %a = memref.load %x[%c2] : memref<?xf64>
  memref.store %a, %x[%c3] : memref<?xf64>
  %b = memref.load %x[%c3] : memref<?xf64>
  memref.store %b, %x[%c3] : memref<?xf64>"""
    )
    assert case.clobbers("a") == []
    assert len(case.clobbers("b")) == 1


# -- index reasoning across loop iterations: both directions ----------------------------


def shift_case(first: str, second: str, step: str = "%c1") -> Case:
    """A loop whose body runs `first` then `second` (a load of %a and a store)."""
    return Case(
        loop(
            f"""
    %ip = arith.addi %i, %c1 : index
    %im = arith.subi %i, %c1 : index
    %ip2 = arith.addi %i, %c2 : index
    %im2 = arith.subi %i, %c2 : index
    {first}
    {second}""",
            lb="%c2",
            step=step,
        )
    )


def load(index: str) -> str:
    return f"%a = memref.load %x[{index}] : memref<?xf64>"


def store(index: str) -> str:
    return f"memref.store %z, %x[{index}] : memref<?xf64>"


@pytest.mark.parametrize(
    "first,second,step,clobbered",
    [
        # store x[i+1] at iteration j hits x[i] only for j = i-1: earlier.
        (load("%i"), store("%ip"), "%c1", False),
        # store x[i-1] at iteration i+1 overwrites what iteration i read.
        (load("%i"), store("%im"), "%c1", True),
        # with step 2 the iterations are i+2, i+4, ...: x[i-1] is never x[i]...
        (load("%i"), store("%im"), "%c2", False),
        # ... but x[i-2] is, one iteration later.
        (load("%i"), store("%im2"), "%c2", True),
        # the store precedes the load: this iteration's store is not "after".
        (store("%i"), load("%i"), "%c1", False),
        # the store of the next iteration (x[i+1]) hits the load of x[i+1].
        (store("%i"), load("%ip"), "%c1", True),
        (store("%ip"), load("%i"), "%c1", False),
        (store("%i"), load("%ip2"), "%c2", True),
        (store("%i"), load("%ip"), "%c2", False),
    ],
)
def test_loop_carried_index_reasoning(first, second, step, clobbered):
    case = shift_case(first, second, step)
    assert bool(case.clobbers("a")) is clobbered


def test_unknown_index_always_may_clobber():
    case = Case(
        loop(
            """
    %a = memref.load %x[%i] : memref<?xf64>
    %k = memref.load %idx[%i] : memref<?xindex>
    memref.store %z, %x[%k] : memref<?xf64>"""
        ),
        "%x: memref<?xf64>, %idx: memref<?xindex> {ad.noalias}, %n: index",
    )
    [reason] = case.clobbers("a")
    assert "which may be %x[%i]" in reason
    assert case.clobbers("k") == []  # %idx is noalias and never written


def test_nested_loops_use_each_common_induction_variable():
    def nested(store_index: str) -> Case:
        return Case(
            loop(
                loop(
                    f"""
      %a = memref.load %A[%i, %j] : memref<8x8xf64>
      %ip = arith.addi %i, %c1 : index
      %im = arith.subi %i, %c1 : index
      %jp = arith.addi %j, %c1 : index
      memref.store %a, %A[{store_index}] : memref<8x8xf64>""",
                    ub="%c4",
                    iv="%j",
                ),
                ub="%c4",
            ),
            "%A: memref<8x8xf64>",
        )

    assert nested("%i, %jp").clobbers("a") == []  # later j: column j+k+1; later i: row i+k
    assert nested("%ip, %j").clobbers("a") == []  # rows i+1, i+2, ... come later
    [reason] = nested("%im, %j").clobbers("a")  # the next i writes row i
    assert "in a later iteration of the scf.for at t.mlir:9:3" in reason


def test_dynamic_strides_may_map_distinct_indices_to_one_element():
    # A strided argument may have stride 0 (numpy broadcasting): x[i] and
    # x[i+1] can be the same element.
    t = "memref<?xf64, strided<[?], offset: ?>>"
    case = Case(
        loop(
            f"""
    %a = memref.load %x[%i] : {t}
    %ip = arith.addi %i, %c1 : index
    memref.store %a, %x[%ip] : {t}"""
        ),
        f"%x: {t}, %n: index",
    )
    assert case.clobbers("a")
    identity = Case(
        loop(
            """
    %a = memref.load %x[%i] : memref<?xf64>
    %ip = arith.addi %i, %c1 : index
    memref.store %a, %x[%ip] : memref<?xf64>"""
        )
    )
    assert identity.clobbers("a") == []


def test_multi_dimensional_disjoint_dimension():
    case = Case(
        "  %A = memref.alloc() : memref<4x4xf64>\n"
        + loop(
            """
    %a = memref.load %A[%i, %c0] : memref<4x4xf64>
    memref.store %a, %A[%i, %c1] : memref<4x4xf64>
    %b = memref.load %A[%i, %c2] : memref<4x4xf64>
    memref.store %b, %A[%c2, %i] : memref<4x4xf64>""",
            ub="%c4",
        )
    )
    assert case.clobbers("a") == []
    assert len(case.clobbers("b")) == 1  # A[2, i] is A[i, 2] when i = 2


# -- control flow ------------------------------------------------------------------------

WHILE = """
  %r = scf.while (%k = %c0) : (index) -> index {{
    {before}
    %go = arith.cmpi slt, %k, %n : index
    scf.condition(%go) %k : index
  }} do {{
  ^bb0(%k2: index):
    {after}
    %k3 = arith.addi %k2, %c1 : index
    scf.yield %k3 : index
  }}"""


def test_while_loops():
    def case(before: str, after: str) -> Case:
        return Case(WHILE.format(before=before, after=after))

    # A loop-carried index: the next iteration may store where this one loaded.
    [reason] = case(load("%k"), store("%k2")).clobbers("a")
    assert "later in the same iteration" in reason
    later = case(store("%k"), load("%k2")).clobbers("a")
    assert len(later) == 1 and "in a later iteration of the scf.while" in later[0]
    # Constant indices never meet, whatever the iteration.
    assert case(load("%c2"), store("%c3")).clobbers("a") == []
    # The before region runs again after the after region.
    assert case(store("%c2") + "\n    " + load("%c2"), "").clobbers("a")


def test_branches_of_one_if_never_follow_each_other():
    body = """
  %cond = arith.cmpi slt, %c0, %n : index
  scf.if %cond {
    %a = memref.load %x[%c0] : memref<?xf64>
  } else {
    memref.store %z, %x[%c0] : memref<?xf64>
  }"""
    assert Case(body).clobbers("a") == []
    # In a loop, the else branch of a later iteration follows.
    in_loop = Case(loop(body.replace("\n", "\n  ")))
    [reason] = in_loop.clobbers("a")
    assert "in a later iteration of the scf.for" in reason


# -- views ---------------------------------------------------------------------------------


def test_cast_and_reinterpret_cast_address_their_source():
    rc = "memref<4x2xf64, strided<[2, 1], offset: 2>>"
    body = f"""
  %c5 = arith.constant 5 : index
  %dyn = "memref.cast"(%x) : (memref<16xf64>) -> memref<?xf64>
  %rc = memref.reinterpret_cast %x to offset: [2], sizes: [4, 2], strides: [2, 1] : memref<16xf64> to {rc}
  %a = memref.load %dyn[%c5] : memref<?xf64>
  %b = memref.load %rc[%c1, %c1] : {rc}
  memref.store %z, %x[{{target}}] : memref<16xf64>"""
    hit = Case(body.format(target="%c5"), "%x: memref<16xf64>")
    store = hit.writes()[0]
    assert hit.aa.may_overlap(store, hit.loads["a"]).kind is AliasKind.MUST_ALIAS
    # rc[1, 1] = x[2 + 1*2 + 1] = x[5]
    assert hit.aa.may_overlap(store, hit.loads["b"]).kind is AliasKind.MUST_ALIAS
    assert hit.clobbers("a") and hit.clobbers("b")
    miss = Case(body.format(target="%c4"), "%x: memref<16xf64>")
    assert miss.clobbers("a") == [] and miss.clobbers("b") == []
    assert miss.aa.alias(miss.values["dyn"], miss.values["x"]).kind is AliasKind.MUST_ALIAS


def test_expand_and_collapse_shape_compose_indices():
    body = """
  %c6 = arith.constant 6 : index
  %e = memref.expand_shape %x [[0, 1]] output_shape [4, 4] : memref<16xf64> into memref<4x4xf64>
  %col = memref.collapse_shape %e [[0, 1]] : memref<4x4xf64> into memref<16xf64>
  %a = memref.load %e[%c1, %c2] : memref<4x4xf64>
  %b = memref.load %col[%c3] : memref<16xf64>
  memref.store %z, %x[TARGET] : memref<16xf64>"""
    hit_a = Case(body.replace("TARGET", "%c6"), "%x: memref<16xf64>")  # e[1, 2] = x[6]
    assert hit_a.clobbers("a") and hit_a.clobbers("b") == []
    hit_b = Case(body.replace("TARGET", "%c3"), "%x: memref<16xf64>")
    assert hit_b.clobbers("a") == [] and hit_b.clobbers("b")


def test_copy_into_a_subview_writes_exactly_its_elements():
    body = VIEWS + """
  %a = memref.load %buf[%c3] : memref<8xf64>
  "memref.copy"(%src, %VIEW) : (memref<4xf64>, TYPE) -> ()"""
    args = "%buf: memref<8xf64>, %src: memref<4xf64>"
    assert Case(body.replace("VIEW", "hi").replace("TYPE", HI), args).clobbers("a") == []
    [reason] = Case(body.replace("VIEW", "lo").replace("TYPE", LO), args).clobbers("a")
    assert reason.startswith("copy at t.mlir:")


# -- allocations, deallocation, calls ---------------------------------------------------------


def test_dealloc_clobbers_everything_in_its_object():
    case = Case(
        """
  %p = memref.alloc(%n) : memref<?xf64>
  %a = memref.load %p[%c0] : memref<?xf64>
  memref.dealloc %p : memref<?xf64>"""
    )
    [reason] = case.clobbers("a")
    assert reason.startswith("dealloc at ") and "writes all of %p" in reason


def test_allocation_inside_a_loop_is_a_new_buffer_each_iteration():
    body = loop(
        """
    %p = memref.KIND() : memref<4xf64>
    %a = memref.load %p[%c0] : memref<4xf64>
    memref.store %z, %p[%c0] : memref<4xf64>"""
    )
    assert Case(body.replace("KIND", "alloc")).clobbers("a") != []  # same iteration, later
    first = body.replace(
        "%a = memref.load %p[%c0] : memref<4xf64>\n    memref.store %z, %p[%c0] : memref<4xf64>",
        "memref.store %z, %p[%c0] : memref<4xf64>\n    %a = memref.load %p[%c0] : memref<4xf64>",
    )
    assert Case(first.replace("KIND", "alloc")).clobbers("a") == []  # next store: another buffer
    # Static allocas are hoisted by the lowering: one buffer for every iteration.
    [reason] = Case(first.replace("KIND", "alloca")).clobbers("a")
    assert "in a later iteration" in reason


CALLS = """
func.func @pure_helper(%v: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %r = memref.load %v[%c0] : memref<?xf64>
  func.return %r : f64
}
func.func @writes_arg(%v: memref<?xf64>, %r: f64) {
  %c0 = arith.constant 0 : index
  memref.store %r, %v[%c0] : memref<?xf64>
  func.return
}
func.func private @external(memref<?xf64>) -> ()
func.func private @opaque() -> ()
func.func private @make() -> memref<?xf64>
"""


def test_calls():
    def case(call: str) -> Case:
        body = f"""
  %p = memref.alloc(%n) : memref<?xf64>
  %q = memref.alloc(%n) : memref<?xf64>
  %a = memref.load %x[%c0] : memref<?xf64>
  %b = memref.load %p[%c0] : memref<?xf64>
  {call}"""
        return Case(body, extra=CALLS)

    pure = case("%r = func.call @pure_helper(%x) : (memref<?xf64>) -> f64")
    assert pure.writes() == [] and pure.clobbers("a") == []
    only_args = case("func.call @writes_arg(%q, %z) : (memref<?xf64>, f64) -> ()")
    assert only_args.clobbers("a") == [] and only_args.clobbers("b") == []
    external = case("func.call @external(%p) : (memref<?xf64>) -> ()")
    assert external.clobbers("a") and external.clobbers("b")
    [reason] = case("func.call @opaque() : () -> ()").clobbers("a")
    assert "reachable from outside the function" in reason
    assert case("func.call @opaque() : () -> ()").clobbers("b") == []  # %p never escapes


def test_unknown_origin_aliases_escaped_allocations_only():
    case = Case(
        """
  %p = memref.alloc(%n) : memref<?xf64>
  %q = memref.alloc(%n) : memref<?xf64>
  func.call @external(%q) : (memref<?xf64>) -> ()
  %m = func.call @make() : () -> memref<?xf64>""",
        extra=CALLS,
    )
    aa, v = case.aa, case.values
    assert aa.underlying(v["m"]).kind is ObjectKind.UNKNOWN
    assert aa.alias(v["m"], v["p"]).kind is AliasKind.NO_ALIAS
    assert aa.alias(v["m"], v["q"]).kind is AliasKind.MAY_ALIAS
    assert aa.alias(v["m"], v["x"]).kind is AliasKind.MAY_ALIAS


# -- building blocks ---------------------------------------------------------------------------


def test_can_be_zero_gcd_and_interval_tests():
    k, m = Fresh("k"), Fresh("m")
    assert not can_be_zero(Affine(1, {k: 2}), {})  # 2k + 1 is odd
    assert can_be_zero(Affine(-2, {k: 2}), {k: (1, None)})  # k = 1
    assert not can_be_zero(Affine(1, {k: 1}), {k: (1, None)})  # k + 1 >= 2
    assert not can_be_zero(Affine(-1, {k: 1, m: 1}), {k: (1, None), m: (1, None)})
    assert can_be_zero(Affine(-2, {k: 1, m: 1}), {k: (1, None), m: (1, None)})
    assert not can_be_zero(Affine(0, {k: 1}), {k: (3, 2)})  # empty range


def test_affine_forms_and_narrow_arithmetic():
    case = Case(
        """
  %a = arith.addi %n, %c2 : index
  %b = arith.muli %a, %c3 : index
  %c = arith.subi %b, %n : index
  %n32 = arith.index_cast %n : index to i32
  %one = arith.constant 1 : i32
  %w = arith.addi %n32, %one : i32
  %wi = arith.index_cast %w : i32 to index"""
    )
    v = case.values
    form = affine_form(v["c"])
    assert form.const == 6 and form.terms == {v["n"]: 2}
    # i32 arithmetic may wrap: its result stays opaque.
    assert affine_form(v["wi"]).terms == {v["w"]: 1}


def test_injective_layouts():
    from xdsl.dialects.builtin import MemRefType, StridedLayoutAttr, f64

    assert is_injective(MemRefType(f64, [4, 4]))
    assert is_injective(MemRefType(f64, [4, 4], StridedLayoutAttr([8, 1], None)))
    assert not is_injective(MemRefType(f64, [4, 4], StridedLayoutAttr([2, 1], 0)))
    assert not is_injective(MemRefType(f64, [4], StridedLayoutAttr([0], 0)))
    assert not is_injective(MemRefType(f64, [4], StridedLayoutAttr([None], None)))


def test_printed_names_match_the_printer():
    # Repeated name hints get suffixes, values without hints numbers, in
    # the order xDSL's printer meets them (nested regions included).
    case = Case(
        loop("    %0 = memref.load %x[%i] : memref<?xf64>\n    %1 = arith.addf %0, %0 : f64")
        + "\n"
        + loop("    %2 = memref.load %x[%i] : memref<?xf64>")
        + "\n  %3 = arith.addi %n, %n : index"
    )
    printer = Printer(stream=io.StringIO())
    printer.print_op(case.function)
    expected = {value: f"%{name}" for value, name in printer._ssa_values.items()}
    assert printed_names(case.function) == expected
    assert "%i_1" in expected.values() and "%3" in expected.values()


def test_tape_ops_never_touch_memrefs():
    case = Case(
        """
  %tape = ad.tape.create : !ad.tape<f64>
  %a = memref.load %x[%c0] : memref<?xf64>
  ad.tape.push %a, %tape : f64, !ad.tape<f64>
  %b = ad.tape.pop %tape : !ad.tape<f64> -> f64
  ad.tape.free %tape : !ad.tape<f64>"""
    )
    assert case.writes() == [] and case.clobbers("a") == []


def test_alloca_scope_frees_its_allocas_when_it_ends():
    case = Case(
        """
  "memref.alloca_scope"() ({
    %p = memref.alloca() : memref<4xf64>
    %a = memref.load %p[%c0] : memref<4xf64>
    "memref.alloca_scope.return"() : () -> ()
  }) : () -> ()"""
    )
    [reason] = case.clobbers("a")
    assert reason.startswith("end of memref.alloca_scope at ") and "writes all of %p" in reason


def test_branch_loop_in_a_multi_block_function():
    # ^loop runs again after itself: a loop-carried index may meet an
    # earlier load; constant indices never do.
    text = """
func.func @f(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %z = arith.constant 0.0 : f64
  cf.br ^loop(%c0 : index)
^loop(%k: index):
  %a = memref.load %x[%k] : memref<?xf64>
  %b = memref.load %x[%c2] : memref<?xf64>
  %k1 = arith.addi %k, %c1 : index
  memref.store %z, %x[%k1] : memref<?xf64>
  memref.store %z, %x[%c3] : memref<?xf64>
  %go = arith.cmpi slt, %k1, %n : index
  cf.cond_br %go, ^loop(%k1 : index), ^done
^done:
  func.return
}
"""
    function = next(op for op in parse_module(text, "t.mlir").ops if isinstance(op, func.FuncOp))
    aa = AliasAnalysis(function)
    loads = {op.res.name_hint: op for op in function.walk() if isinstance(op, memref.LoadOp)}
    reasons = [c.reason for c in aa.clobbers(loads["a"])]
    assert any("region with several blocks" in r and "%x[%k + 1]" in r for r in reasons)
    # x[k+1] may be x[2] (k is unknown); x[3] never is.
    [reason] = [c.reason for c in aa.clobbers(loads["b"])]
    assert "writes %x[%k + 1], which may be %x[2]" in reason


def test_unranked_memref_means_unknown_elements():
    case = Case(
        """
  %r = "memref.cast"(%u) : (memref<*xf64>) -> memref<?xf64>
  %a = memref.load %r[%c0] : memref<?xf64>
  memref.store %z, %r[%c1] : memref<?xf64>""",
        "%x: memref<?xf64>, %u: memref<*xf64>",
    )
    [reason] = case.clobbers("a")
    # Without a layout for %u, r[1] and r[0] cannot be located in it.
    assert reason.endswith("writes %u[?], which may be %u[?]")
    assert case.aa.alias(case.values["r"], case.values["u"]).kind is AliasKind.MAY_ALIAS
