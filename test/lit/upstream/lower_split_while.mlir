// Split mode with a growable tape (the values of an scf.while loop), lowered
// for upstream MLIR (--lower-ad-ops): the forward half pops the runtime tape
// into a fresh memref.alloc (oldest value first; at least one element) and
// frees the handle (ad.tape.export); the reverse half reads that buffer from
// the top through a one-element counter (ad.tape.import). No ad op is left.
// The runtime is defined in the file (a one-tape stand-in for the C version
// of docs/mlir_interop.md), so --lower-ad-ops uses these definitions and
// ad-run can run the output.
// f(x): while w < 10: w = w + exp(w). By hand df/dx is the product of
// (1 + exp(w_k)) over the iterations: at x = 0.5 the loop runs 0.5 ->
// 2.1487 -> 10.7226, so df/dx = (1 + e^0.5)(1 + e^2.1487) = 25.3586; at
// x = 20 it runs no iteration (an empty tape handed over) and df/dx = 1.
// RUN: ad-opt %s --reverse --lower-ad-ops | filecheck %s
// RUN: ad-opt %s --reverse --lower-ad-ops | ad-run --entry main | filecheck %s --check-prefix=OUT
// OUT-NOT: inf
// OUT: (10.72260897367925, 25.35856000217519, 20.0, 1.0)

// CHECK-NOT:  ad.tape
// CHECK-NOT:  !ad.split_tape
// CHECK-LABEL: func.func @f_grad_a_a_s_aug(%x: f64) -> (f64, memref<?xf64>, index, index) {
// CHECK:        %[[H:.*]] = func.call @adpasses_tape_create_f64() : () -> index
// CHECK:        scf.while
// CHECK:        func.call @adpasses_tape_push_f64(%[[H]], %e)
// CHECK:        %[[N:.*]] = func.call @adpasses_tape_count_f64(%[[H]]) : (index) -> index
// CHECK:        %[[SIZE:.*]] = arith.maxui %[[N]], %{{.*}} : index
// CHECK:        %[[BUF:.*]] = memref.alloc(%[[SIZE]]) : memref<?xf64>
// CHECK:        scf.for %{{.*}} = %{{.*}} to %[[N]]
// CHECK:          %[[V:.*]] = func.call @adpasses_tape_pop_f64(%[[H]]) : (index) -> f64
// CHECK:          memref.store %[[V]], %[[BUF]][%{{.*}}] : memref<?xf64>
// CHECK:        func.call @adpasses_tape_free_f64(%[[H]])
// CHECK:        func.return %{{.*}}, %[[BUF]], %[[N]], %{{.*}} : f64, memref<?xf64>, index, index
// CHECK-LABEL: func.func @f_grad_a_a_s_rev(%seed: f64, %tape_e_buffer: memref<?xf64>, %tape_e_count: index, %{{.*}}: index) -> f64 {
// CHECK:        %[[C:.*]] = memref.alloca() : memref<1xindex>
// CHECK:        memref.store %tape_e_count, %[[C]]
// CHECK:        scf.for
// CHECK:          %[[TOP:.*]] = memref.load %[[C]]
// CHECK:          %[[BELOW:.*]] = arith.subi %[[TOP]]
// CHECK:          memref.store %[[BELOW]], %[[C]]
// CHECK:          memref.load %tape_e_buffer[%[[BELOW]]] : memref<?xf64>
// CHECK:        memref.dealloc %tape_e_buffer

// A stand-in for the C runtime (one tape at a time).
memref.global "private" @stack : memref<64xf64> = uninitialized
memref.global "private" @top : memref<1xindex> = uninitialized
func.func @adpasses_tape_create_f64() -> index {
  %c0 = arith.constant 0 : index
  %t = memref.get_global @top : memref<1xindex>
  memref.store %c0, %t[%c0] : memref<1xindex>
  func.return %c0 : index
}
func.func @adpasses_tape_push_f64(%h: index, %v: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.get_global @top : memref<1xindex>
  %s = memref.get_global @stack : memref<64xf64>
  %n = memref.load %t[%c0] : memref<1xindex>
  memref.store %v, %s[%n] : memref<64xf64>
  %m = arith.addi %n, %c1 : index
  memref.store %m, %t[%c0] : memref<1xindex>
  func.return
}
func.func @adpasses_tape_pop_f64(%h: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.get_global @top : memref<1xindex>
  %s = memref.get_global @stack : memref<64xf64>
  %n = memref.load %t[%c0] : memref<1xindex>
  %m = arith.subi %n, %c1 : index
  memref.store %m, %t[%c0] : memref<1xindex>
  %v = memref.load %s[%m] : memref<64xf64>
  func.return %v : f64
}
func.func @adpasses_tape_free_f64(%h: index) {
  func.return
}
func.func @adpasses_tape_count_f64(%h: index) -> index {
  %c0 = arith.constant 0 : index
  %t = memref.get_global @top : memref<1xindex>
  %n = memref.load %t[%c0] : memref<1xindex>
  func.return %n : index
}
func.func @f(%x: f64) -> f64 {
  %lim = arith.constant 10.0 : f64
  %r = scf.while (%w = %x) : (f64) -> f64 {
    %go = arith.cmpf olt, %w, %lim : f64
    scf.condition(%go) %w : f64
  } do {
  ^bb0(%w2: f64):
    %e = math.exp %w2 : f64
    %n = arith.addf %e, %w2 : f64
    scf.yield %n : f64
  }
  func.return %r : f64
}
func.func @df(%x: f64) -> (f64, f64) {
  %one = arith.constant 1.0 : f64
  %y, %t = ad.autodiff @f(%x) {activity = [active], ret_activity = [active], split = forward} : (f64) -> (f64, !ad.split_tape)
  %dx = ad.autodiff @f(%one, %t) {activity = [active], ret_activity = [active], split = reverse} : (f64, !ad.split_tape) -> f64
  func.return %y, %dx : f64, f64
}
func.func @main() -> (f64, f64, f64, f64) {
  %a = arith.constant 0.5 : f64
  %b = arith.constant 20.0 : f64
  %ya, %da = func.call @df(%a) : (f64) -> (f64, f64)
  %yb, %db = func.call @df(%b) : (f64) -> (f64, f64)
  func.return %ya, %da, %yb, %db : f64, f64, f64, f64
}
