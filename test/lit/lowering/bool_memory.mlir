// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir --opt --no-boundscheck | filecheck %s --check-prefix=OPT
// An i1 element of memory (a numpy bool array, a tape of choices: the max's
// `x > m`) is the byte it is stored in: stored as `zext` to i8, loaded as i8
// and truncated. LLVM vectorises such loops with byte vectors; with
// `load i1` / `store i1` it loaded and stored each lane on its own (an i1
// vector is bit-packed, memory is not), which made the reverse sweep of a
// column max 2x slower.

// CHECK-LABEL: define {{.*}}@"u.choices"
// CHECK: fcmp ogt double
// CHECK: [[B:%.*]] = zext i1 {{.*}} to i8
// CHECK: store i8 [[B]]
// CHECK-LABEL: define {{.*}}@"u.pick"
// CHECK: [[L:%.*]] = load i8
// CHECK: trunc i8 [[L]] to i1
// OPT-LABEL: define {{.*}}@u.choices
// OPT: fcmp ogt <[[N:[0-9]+]] x double>
// OPT: store <[[N]] x i8>
// OPT-LABEL: define {{.*}}@u.pick
// OPT: load <[[M:[0-9]+]] x i8>
// OPT: select <[[M]] x i1>
func.func @choices(%x: memref<?xf64> {ad.noalias}, %m: memref<?xf64> {ad.noalias}, %c: memref<?xi1> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.load %x[%i] : memref<?xf64>
    %b = memref.load %m[%i] : memref<?xf64>
    %gt = arith.cmpf ogt, %a, %b : f64
    memref.store %gt, %c[%i] : memref<?xi1>
  }
  func.return
}

func.func @pick(%c: memref<?xi1> {ad.noalias}, %x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.load %c[%i] : memref<?xi1>
    %a = memref.load %x[%i] : memref<?xf64>
    %v = arith.select %t, %a, %zero : f64
    memref.store %v, %y[%i] : memref<?xf64>
  }
  func.return
}
