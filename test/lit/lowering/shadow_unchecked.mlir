// RUN: ad-opt %s --reverse --emit=llvm-ir | filecheck %s
// RUN: ad-opt %s --reverse --emit=llvm-ir --opt | filecheck %s --check-prefix=OPT
// RUN: ad-opt %s --reverse --emit=llvm-ir --no-boundscheck | filecheck %s --check-prefix=NOCHECK
// The in-place square's gradient: `ad.shadow_check` compares the shadow's
// size with the primal's once, at entry (error axis -2: dimension 0), and no
// shadow access compares an index against dx.size0, so LLVM vectorises the
// reverse loops (docs/benchmarks.md, "Compiler problems found" 4). Without
// bounds checks the entry check goes too. (The tape's allocation keeps its
// size checks, axis codes below -2**40: adpasses.core.stop_codes.)

// CHECK-LABEL: define void @"u.sq_grad_d_a"(
// CHECK:         icmp ne i64 %"dx.size0", %"x.size0"
// CHECK:         call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %"dx.size0", i64 -2, i64 %"x.size0")
// CHECK-NOT:     dx.size0
// CHECK:         {{^}$}}

// OPT-LABEL: define void @u.sq_grad_d_a(
// OPT:         tail call fastcc void @__adpasses_oob(i64 {{[0-9]+}}, i64 %dx.size0, i64 -2, i64 %x.size0)
// OPT-NOT:     @__adpasses_oob(i64 {{[0-9]+}}, i64 {{[^,]+}}, i64 {{[0-9]+}},
// OPT:         fadd <{{[0-9]+}} x double>
// OPT-NOT:     @__adpasses_oob(i64 {{[0-9]+}}, i64 {{[^,]+}}, i64 {{[0-9]+}},
// OPT:         {{^}$}}

// NOCHECK-LABEL: define void @"u.sq_grad_d_a"(
// NOCHECK-NOT:   @"__adpasses_oob"(i64 {{[0-9]+}}, i64 {{[^,]+}}, i64 {{-2|[0-9]+}},
// NOCHECK:       {{^}$}}

func.func @sq(%x: memref<?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = arith.mulf %v, %v : f64
    memref.store %w, %x[%i] : memref<?xf64>
  }
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (f64) {
    %v = memref.load %x[%i] : memref<?xf64>
    %s = arith.addf %acc, %v : f64
    scf.yield %s : f64
  }
  func.return %r : f64
}
func.func @main(%x: memref<?xf64> {ad.noalias}, %dx: memref<?xf64> {ad.noalias}, %seed: f64) {
  ad.autodiff @sq(%x, %dx, %seed) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
