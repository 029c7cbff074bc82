// RUN: ad-opt %s --forward --no-loop-local --print-cache-report 2>&1 >/dev/null | filecheck %s
// RUN: ad-opt %s --forward --no-loop-local --print-cache-report --cache-report-format=json 2>&1 >/dev/null | filecheck %s --check-prefix=JSON
// RUN: ad-run %s --entry run | filecheck %s --check-prefix=NUM
// The cache report of forward over reverse: after the gradient's report,
// what the tangent sweep of @h (the Hessian-vector product, width 2) tapes.
// The gradient tapes exp(c) and p = sin(x[i]) exp(c) per iteration; along
// the direction (x, with c held constant) p varies, so its tape gets one
// tangent tape per lane beside it, and exp(c) does not, so it gets none.
//
// f = sum_i (sin(x_i) e^c)^2: H_ii = 2 e^{2c} cos(2 x_i), off-diagonal 0.
// With x = (0, 1), c = 0: H v for v = (1, 0) and (0, 1) = (2, 0), (0, -0.832294).

// CHECK-LABEL: cache report for @f_grad_dc_a (gradient of @f, policy minimal)
// CHECK:         tape      %e    f64 x dim(x, 0)
// CHECK:         tape      %p    f64 x dim(x, 0)
// CHECK:         taped bytes: 8*(dim(x, 0)) + 8*(dim(x, 0))
// CHECK-LABEL: tangent tapes of @g_fwd_ddc__w2 (forward over reverse of @g, width 2)
// CHECK-NEXT:    none     %tape_e  f64 x max(dim(x, 0), 0) {{.*}}:{{[0-9]+}}:5  no tangent tape: its values do not vary along the direction
// CHECK-NEXT:    tangent  %tape_p  f64 x 2 lanes x max(dim(x, 0), 0) {{.*}}:{{[0-9]+}}:5  beside the primal tape: its values vary along the direction
// CHECK-NEXT:    tangent taped bytes: 2*8*(max(dim(x, 0), 0))

// JSON:      "tangent": "g_fwd_ddc__w2",
// JSON:      "width": 2,
// JSON:      "tape": "%tape_e",
// JSON:      "lanes": 0,
// JSON:      "tape": "%tape_p",
// JSON:      "lanes": 2,
// JSON:      "bytes": "2*8*(max(dim(x, 0), 0))"

func.func @f(%x: memref<?xf64>, %c: f64) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %a = memref.load %x[%i] : memref<?xf64>
    %s = math.sin %a : f64
    %e = math.exp %c : f64
    %p = arith.mulf %s, %e : f64
    %q = arith.mulf %p, %p : f64
    %t = arith.addf %acc, %q : f64
    scf.yield %t : f64
  }
  func.return %r : f64
}

func.func @g(%x: memref<?xf64>, %gx: memref<?xf64>, %c: f64) {
  %one = arith.constant 1.0 : f64
  ad.autodiff @f(%x, %gx, %c, %one) {activity = [dup, const], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64, f64) -> ()
  func.return
}

func.func @run() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %x = memref.alloc(%c2) : memref<?xf64>
  %gx = memref.alloc(%c2) : memref<?xf64>
  %v0 = memref.alloc(%c2) : memref<?xf64>
  %v1 = memref.alloc(%c2) : memref<?xf64>
  %h0 = memref.alloc(%c2) : memref<?xf64>
  %h1 = memref.alloc(%c2) : memref<?xf64>
  scf.for %i = %c0 to %c2 step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    memref.store %f, %x[%i] : memref<?xf64>
    memref.store %zero, %gx[%i] : memref<?xf64>
    memref.store %zero, %v0[%i] : memref<?xf64>
    memref.store %zero, %v1[%i] : memref<?xf64>
    memref.store %zero, %h0[%i] : memref<?xf64>
    memref.store %zero, %h1[%i] : memref<?xf64>
  }
  memref.store %one, %v0[%c0] : memref<?xf64>
  memref.store %one, %v1[%c1] : memref<?xf64>
  ad.fwddiff @g(%x, %v0, %v1, %gx, %h0, %h1, %zero) {activity = [dup, dup, const], ret_activity = [], width = 2} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>, f64) -> ()
  %a = memref.load %h0[%c0] : memref<?xf64>
  %b = memref.load %h0[%c1] : memref<?xf64>
  %c = memref.load %h1[%c0] : memref<?xf64>
  %d = memref.load %h1[%c1] : memref<?xf64>
  // NUM: Hv0 = 2 0 Hv1 = 0 -0.832294
  printf.print_format "Hv0 = {} {} Hv1 = {} {}\n", %a : f64, %b : f64, %c : f64, %d : f64
  func.return
}
