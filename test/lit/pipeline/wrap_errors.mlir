// Errors of ad-wrap: one line, naming the request and what to do instead;
// exit status 1, no traceback.
// RUN: not ad-opt %S/Inputs/wrap_sum.mlir --reverse-wrap="fn=g" 2>&1 | filecheck %s --check-prefix=NOFN
// RUN: not ad-opt %S/Inputs/wrap_sum.mlir --reverse-wrap="fn=f activities=dup" 2>&1 | filecheck %s --check-prefix=COUNT
// RUN: not ad-opt %S/Inputs/wrap_sum.mlir --reverse-wrap="fn=f activities=active,active" 2>&1 | filecheck %s --check-prefix=KIND
// RUN: not ad-opt %S/Inputs/wrap_sum.mlir --reverse-wrap="fn=f name=f" 2>&1 | filecheck %s --check-prefix=CLASH
// RUN: not ad-opt %S/Inputs/wrap_sum.mlir --reverse-wrap="fn=f bogus=1" 2>&1 | filecheck %s --check-prefix=FIELD
// RUN: not ad-opt %S/Inputs/wrap_sum.mlir --reverse-wrap="activities=dup,active" 2>&1 | filecheck %s --check-prefix=NONAME
// RUN: not ad-opt %S/Inputs/wrap_sum.mlir --forward-wrap="fn=f with-primal" 2>&1 | filecheck %s --check-prefix=PRIMAL
// RUN: not ad-opt %S/../run/wrap_run.mlir --reverse-wrap="fn=f name=tf" 2>&1 | filecheck %s --check-prefix=DECL

// NOFN: error: ad-wrap{fn=g}: the module has no function @g (it has: @f); name one of its functions with fn=NAME
// COUNT: wrap_sum.mlir:1:1: error: ad-wrap{fn=f}: expected 2 argument activities, got 1
// KIND: wrap_sum.mlir:1:1: error: ad-wrap{fn=f}: argument 0 is 'active' but has type memref<?xf64>; only float scalars can be active
// CLASH: wrap_sum.mlir:1:1: error: ad-wrap{fn=f}: the module already defines a function @f; choose another name with name=NAME
// FIELD: error: --reverse-wrap: unknown field 'bogus' in 'fn=f bogus=1'; expected activities, fn, name, rets, split, strong-zero, width, with-primal
// NONAME: error: --reverse-wrap: 'activities=dup,active' names no function; write fn=NAME
// PRIMAL: error: ad-wrap{fn=f}: with-primal is a reverse-mode option
// DECL: wrap_run.mlir:25:1: error: ad-wrap{fn=f}: @tf is declared as (memref<?xf64>, memref<?xf64>, f64, f64) -> (f64, f64), but the derivative it names has type (memref<?xf64>, memref<?xf64>, f64, f64) -> f64; declare it with that type
// NOFN-NOT: Traceback
