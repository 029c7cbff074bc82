// RUN: ad-opt %s --emit=llvm-ir --opt --no-boundscheck | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir --opt | filecheck %s --check-prefix=CHECKED
// After LLVM's O3 with loop vectorisation, a contiguous noalias loop is
// vectorised: GEP addressing with a unit stride known from the type.
// With bounds checks it still is: the check of x[i] folds away (i < n =
// size of x), and LLVM versions the loop on the invariant condition
// "size of x <= size of y" for the check of y[i]: the vector loop runs
// when it holds, the checked scalar loop otherwise.

// CHECKED-LABEL: define {{.*}}@u.scale
// CHECKED: icmp ugt i64 %x.size0, %y.size0
// CHECKED: load <{{[0-9]+}} x double>
// CHECKED: call fastcc void @__adpasses_oob

// CHECK-LABEL: define {{.*}}@u.scale
// CHECK: <{{[0-9]+}} x double>
func.func @scale(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %w = arith.mulf %v, %two : f64
    memref.store %w, %y[%i] : memref<?xf64>
  }
  func.return
}
