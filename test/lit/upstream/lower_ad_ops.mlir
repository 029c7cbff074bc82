// ad-opt --lower-ad-ops: what is left of the ad dialect after --reverse
// becomes upstream ops, so that mlir-opt reads the gradient. Shadow checks
// of dynamic sizes: memref.dim, arith.cmpi, cf.assert; growable tapes (of
// scf.while): calls to the declared runtime adpasses_tape_*; tapes of known
// capacity: memref buffers; ad.keep: nothing. test/test_upstream_mlir.py
// parses and verifies this output with upstream MLIR.
// RUN: ad-opt %s --reverse --cache-policy=tape-all --lower-ad-ops | filecheck %s
// RUN: ad-opt %s --reverse --cache-policy=tape-all | filecheck %s --check-prefix=BEFORE
// RUN: not ad-opt %s -p ad-lower-ad-ops 2>&1 | filecheck %s --check-prefix=UNDIFF

// BEFORE: ad.shadow_check
// BEFORE: ad.tape.create
// UNDIFF: lower_ad_ops.mlir:{{[0-9]+}}:3: error: 'ad.autodiff': cannot be lowered to upstream MLIR ops before it is differentiated: run ad-opt --reverse (or --forward) with --lower-ad-ops

// CHECK-NOT: ad.shadow_check
// CHECK-NOT: ad.tape
// CHECK-NOT: ad.keep
// CHECK-NOT: !ad.
// CHECK:      func.func private @adpasses_tape_create_f64() -> index
// CHECK-NEXT: func.func private @adpasses_tape_push_f64(index, f64) -> ()
// CHECK-NEXT: func.func private @adpasses_tape_pop_f64(index) -> f64
// CHECK-NEXT: func.func private @adpasses_tape_free_f64(index) -> ()
// CHECK-LABEL: func.func @scale_grad_dd_(%x: memref<?xf64>, %dx: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>)
// CHECK:        %[[D:.*]] = memref.dim %x, %[[C0:.*]] : memref<?xf64>
// CHECK-NEXT:   %[[S:.*]] = memref.dim %dx, %[[C0]] : memref<?xf64>
// CHECK-NEXT:   %[[OK:.*]] = arith.cmpi eq, %[[D]], %[[S]] : index
// CHECK-NEXT:   cf.assert %[[OK]], "shadow %dx differs in size from %x in dimension 0: a shadow must have exactly its primal's shape"
// CHECK-LABEL: func.func @newton_grad_a_a(%a: f64, %{{.*}}: f64) -> f64
// CHECK:        %[[T:.*]] = func.call @adpasses_tape_create_f64() : () -> index
// CHECK:        scf.while
// CHECK:        func.call @adpasses_tape_push_f64(%[[T]], %{{.*}}) : (index, f64) -> ()
// CHECK:        func.call @adpasses_tape_pop_f64(%[[T]]) : (index) -> f64
// CHECK:        func.call @adpasses_tape_free_f64(%[[T]]) : (index) -> ()

func.func @scale(%x: memref<?xf64>, %y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %e = math.exp %v : f64
    memref.store %e, %y[%i] : memref<?xf64>
  }
  func.return
}

func.func @newton(%a: f64) -> f64 {
  %half = arith.constant 0.5 : f64
  %tol = arith.constant 1.0e-12 : f64
  %r:2 = scf.while (%x = %a, %dx = %a) : (f64, f64) -> (f64, f64) {
    %ad = math.absf %dx : f64
    %c = arith.cmpf ogt, %ad, %tol : f64
    scf.condition(%c) %x, %dx : f64, f64
  } do {
  ^bb0(%x: f64, %d: f64):
    %q = arith.divf %a, %x : f64
    %s = arith.addf %x, %q : f64
    %xn = arith.mulf %half, %s : f64
    %dd = arith.subf %xn, %x : f64
    scf.yield %xn, %dd : f64, f64
  }
  func.return %r#0 : f64
}

func.func @main(%x: memref<?xf64>, %dx: memref<?xf64>, %y: memref<?xf64>, %dy: memref<?xf64>, %a: f64) -> f64 {
  ad.autodiff @scale(%x, %dx, %y, %dy) {activity = [dup, dup], ret_activity = []} : (memref<?xf64>, memref<?xf64>, memref<?xf64>, memref<?xf64>) -> ()
  %one = arith.constant 1.0 : f64
  %d = ad.autodiff @newton(%a, %one) {activity = [active], ret_activity = [active]} : (f64, f64) -> f64
  func.return %d : f64
}
