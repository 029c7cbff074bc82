// Errors of forward mode: one line at the op's location, naming the op and
// what to do instead; exit status 1, no traceback. An op that carries a
// derivative but has no forward rule is an error, never a zero tangent.
// RUN: not ad-opt %S/Inputs/no_rule.mlir --forward 2>&1 | filecheck %s --check-prefix=NORULE
// RUN: not ad-opt %S/Inputs/external_call.mlir --forward 2>&1 | filecheck %s --check-prefix=EXT
// RUN: not ad-opt %S/Inputs/bad_activity.mlir --forward 2>&1 | filecheck %s --check-prefix=ACT
// RUN: not ad-opt %S/Inputs/missing_tangent.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not ad-opt %S/Inputs/zero_width.mlir 2>&1 | filecheck %s --check-prefix=WIDTH
// RUN: not ad-opt %S/Inputs/int_tangent.mlir 2>&1 | filecheck %s --check-prefix=INT
// RUN: not ad-opt %S/Inputs/autodiff_inside.mlir -p ad-forward 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: not ad-run %S/Inputs/shadow_size.mlir 2>&1 | filecheck %s --check-prefix=SIZE
// RUN: not ad-opt %S/Inputs/checkpoint_recursion.mlir --forward 2>&1 | filecheck %s --check-prefix=RECUR

// NORULE: no_rule.mlir:4:3: error: 'llvm.fneg': has no forward-mode rule, but it computes a value that carries a derivative
// NORULE-NOT: Traceback
// EXT: external_call.mlir:4:3: error: 'func.call': calls '@ext', which has no body to differentiate, with the value %y, which carries a derivative
// ACT: bad_activity.mlir:5:3: error: 'ad.fwddiff' op unknown argument activity 'active'; expected one of const, dup, dupnoneed ('active' is reverse mode's
// MISSING: missing_tangent.mlir:5:3: error: 'ad.fwddiff' op expected 3 operands (1 arguments, 2 tangents (width 2)), got 2; is a tangent missing?
// WIDTH: zero_width.mlir:5:79: error: width must be at least 1, got 0
// INT: int_tangent.mlir:5:3: error: 'ad.fwddiff' op argument 0 is 'dup' but has type index; only float scalars and memrefs have tangents
// NESTED: autodiff_inside.mlir:7:3: error: 'ad.autodiff': ad.autodiff inside a function differentiated in forward mode: run the reverse pipeline first
// SIZE: error: main(): shadow %dx (argument 1) has size 2 in dimension 0, but its primal %x (argument 0) has size 3
// RECUR: checkpoint_recursion.mlir:9:5: error: 'func.call': recursive call (r -> r) cannot be inlined for forward-mode differentiation (ad.checkpoint helps reverse mode only): rewrite the recursion as a loop
// RECUR-NOT: Traceback
