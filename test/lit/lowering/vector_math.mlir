// REQUIRES: libmvec
// RUN: ad-opt %s --emit=llvm-ir --opt --no-boundscheck | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir | filecheck %s --check-prefix=BEFORE
// RUN: env ADPASSES_VECTOR_MATH=0 ad-opt %s --emit=llvm-ir --opt --no-boundscheck | filecheck %s --check-prefix=OFF
// SIMD math (adpasses/native/vector_math.py): before LLVM's passes each call
// of a mapped intrinsic names its libmvec variants; the loop vectoriser then
// calls them on whole vectors. Scalar code (the loop's remainder, @one) keeps
// the scalar intrinsic. tanh is the intrinsic llvm.tanh (libm's tanh may
// write errno, which kept such loops scalar).

// BEFORE-LABEL: define {{.*}}@"u.energy"
// BEFORE: call double @"llvm.exp.f64"
// BEFORE: call double @"llvm.tanh.f64"
// BEFORE: call double @"llvm.pow.f64"

// CHECK: @llvm.compiler.used = appending global [{{[0-9]+}} x ptr] [ptr @_ZGV
// CHECK-LABEL: define {{.*}}@u.energy
// CHECK-DAG: call <[[N:[0-9]+]] x double> @_ZGV{{[bde]}}N[[N]]v_exp(
// CHECK-DAG: call <[[N]] x double> @_ZGV{{[bde]}}N[[N]]v_tanh(
// CHECK-DAG: call <[[N]] x double> @_ZGV{{[bde]}}N[[N]]vv_pow(
// CHECK-DAG: call double @llvm.exp.f64(
// CHECK-LABEL: define {{.*}}@u.one
// CHECK-NOT: _ZGV
// CHECK: call double @llvm.sin.f64(
// CHECK-NOT: _ZGV
// CHECK: ret double
// CHECK: "vector-function-abi-variant"="_ZGV_LLVM_N{{[0-9]+}}v_llvm.exp.f64(_ZGV

// OFF-NOT: _ZGV
func.func @energy(%x: memref<?xf64> {ad.noalias}, %y: memref<?xf64> {ad.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf64>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf64>
    %e = math.exp %v : f64
    %t = math.tanh %e : f64
    %p = math.powf %v, %t : f64
    memref.store %p, %y[%i] : memref<?xf64>
  }
  func.return
}

func.func @one(%x: f64) -> f64 {
  %s = math.sin %x : f64
  func.return %s : f64
}
