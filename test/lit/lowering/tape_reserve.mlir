// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir --opt --no-boundscheck | filecheck %s --check-prefix=OPT
// `ad.tape.reserve` on a growable tape grows it once, to at least
// count + n values (through the counting realloc); a push marked
// `ad.reserved` then stores and increments, with no test for room, so
// after O3 the pushing loop is vectorised (a push that tests would keep
// the loop scalar: the growth is a call). On a tape with a capacity the
// reserve is nothing.

// CHECK-LABEL: define void @"u.push_rows"
// CHECK: call {i64, i1} @"llvm.uadd.with.overflow.i64"
// CHECK: call ptr @"__adpasses_realloc"
// CHECK: for.body
// CHECK-NOT: __adpasses_realloc
// CHECK: define void @"u.fixed"
// CHECK-NOT: llvm.uadd.with.overflow
// CHECK: ret void

// OPT-LABEL: define void @u.push_rows
// OPT: fmul <{{[0-9]+}} x double>
func.func @push_rows(%x: memref<?xf64> {ad.noalias}, %m: index, %out: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f64
  %n = memref.dim %x, %c0 : memref<?xf64>
  %t = ad.tape.create : !ad.tape<f64>
  scf.for %i = %c0 to %m step %c1 {
    ad.tape.reserve %t, %n : !ad.tape<f64>
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%j] : memref<?xf64>
      %w = arith.mulf %v, %two : f64
      ad.tape.push %w, %t {ad.reserved} : f64, !ad.tape<f64>
    }
  }
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %v = ad.tape.pop %t : !ad.tape<f64> -> f64
      %o = memref.load %out[%j] : memref<?xf64>
      %s = arith.addf %o, %v : f64
      memref.store %s, %out[%j] : memref<?xf64>
    }
  }
  ad.tape.free %t : !ad.tape<f64>
  func.return
}
func.func @fixed(%a: f64, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = ad.tape.create %n : !ad.tape<f64>
  ad.tape.reserve %t, %n : !ad.tape<f64>
  scf.for %i = %c0 to %n step %c1 {
    ad.tape.push %a, %t {ad.reserved} : f64, !ad.tape<f64>
  }
  ad.tape.free %t : !ad.tape<f64>
  func.return
}
