// ad-wrap (ad-opt --reverse-wrap / --forward-wrap): a function whose body is
// one ad.autodiff / ad.fwddiff of the named function, with the operands and
// results that op takes; default activities: memrefs dup, floats active
// (reverse) or dup (forward), the rest const.
// RUN: ad-opt %S/Inputs/wrap_sum.mlir --reverse-wrap="fn=f" --emit-after=ad-wrap | filecheck %s --check-prefix=REV
// RUN: ad-opt %S/Inputs/wrap_sum.mlir --reverse-wrap="fn=f activities=const,active name=ds with-primal" --emit-after=ad-wrap | filecheck %s --check-prefix=PRIMAL
// RUN: ad-opt %S/Inputs/wrap_sum.mlir --forward-wrap="fn=f activities=dup,const width=2 name=tf" --emit-after=ad-wrap | filecheck %s --check-prefix=FWD
// RUN: ad-opt %S/Inputs/wrap_sum.mlir -p 'ad-wrap{fn="f" activities="dupnoneed,const" rets="active"}' | filecheck %s --check-prefix=PASS
// Both at once, then the whole reverse and forward pipelines: no ad op is left.
// RUN: ad-opt %S/Inputs/wrap_sum.mlir --reverse-wrap="fn=f" --forward-wrap="fn=f" | filecheck %s --check-prefix=BOTH

// REV:      func.func @f(
// REV:      func.func @f_reverse(%x: memref<?xf64>, %dx: memref<?xf64>, %s: f64, %d_ret0: f64) -> f64 {
// REV-NEXT:   %0 = ad.autodiff @f(%x, %dx, %s, %d_ret0) {activity = [dup, active], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> f64
// REV-NEXT:   func.return %0 : f64

// PRIMAL:      func.func @ds(%x: memref<?xf64>, %s: f64, %d_ret0: f64) -> (f64, f64) {
// PRIMAL-NEXT:   %0, %1 = ad.autodiff @f(%x, %s, %d_ret0) {activity = [const, active], ret_activity = [active], with_primal} : (memref<?xf64>, f64, f64) -> (f64, f64)

// FWD:      func.func @tf(%x: memref<?xf64>, %dxa: memref<?xf64>, %dxb: memref<?xf64>, %s: f64) -> (f64, f64, f64) {
// FWD-NEXT:   %0, %1, %2 = ad.fwddiff @f(%x, %dxa, %dxb, %s) {activity = [dup, const], ret_activity = [dup], width = 2}

// PASS:      func.func @f_reverse(%x: memref<?xf64>, %dx: memref<?xf64>, %s: f64, %d_ret0: f64) {
// PASS-NEXT:   ad.autodiff @f(%x, %dx, %s, %d_ret0) {activity = [dupnoneed, const], ret_activity = [active]}

// BOTH-NOT: ad.autodiff
// BOTH-NOT: ad.fwddiff
// BOTH-DAG: func.func @f_reverse(
// BOTH-DAG: func.func @f_forward(
// BOTH-NOT: ad.autodiff
// BOTH-NOT: ad.fwddiff
