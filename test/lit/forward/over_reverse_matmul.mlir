// RUN: ad-opt --forward %s | filecheck %s
// RUN: ad-opt --forward %s --emit=llvm-ir | filecheck %s --check-prefix=LLVM
// RUN: ad-run %s | filecheck %s --check-prefix=NUM
// Forward over reverse through a matrix product (the Hessian of functions
// written with `@`): f(a, x) = sum((a @ x)^2) with a const. The gradient
// keeps its products structured (their outputs share no memory with their
// inputs): c += a @ x forward, gx += a^T @ dc in the reverse sweep (a^T: a
// strided view of a). ad-forward gives each product its tangent product
// right after it (forward/rules/linalg.py: dC += dA @ B + A @ dB, here
// only A @ dB since a is const): dc += a @ dx, dgx += a^T @ ddc.
// Lowered for LLVM, every product's loop nest is unchecked (its size
// matches bound every index) and every stop of the function leaves
// through one exit, freeing the arrays live at it through shared blocks.
//
// Hand derivation: grad_x f = 2 a^T a x, H v = 2 a^T a v. With
// a = [[1, 2], [3, 4]] (a^T a = [[10, 14], [14, 20]]), x = [[0.5, -1],
// [2, 0.25]] and v = e_00: grad = [[66, -13], [94, -18]], H v = [[20, 0],
// [28, 0]].

// CHECK-LABEL: func.func @g_fwd_cdd_(%a: memref<?x?xf64> {ad.noalias}, %x: memref<?x?xf64> {ad.noalias}, %dx: memref<?x?xf64> {ad.noalias}, %gx: memref<?x?xf64> {ad.noalias}, %dgx: memref<?x?xf64> {ad.noalias})
// CHECK:         %c = memref.alloc(%m, %n) : memref<?x?xf64>
// CHECK-NEXT:    %dc = memref.alloc(%m, %n) : memref<?x?xf64>
// CHECK:         linalg.matmul ins(%a, %x : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
// CHECK-NEXT:    linalg.matmul ins(%a, %dx : memref<?x?xf64>, memref<?x?xf64>) outs(%dc : memref<?x?xf64>)
// The reverse sweep of the sum of squares: dc_1 += 2 c dv, its tangent ddc.
// CHECK:         %[[DC1:dc_[0-9]+]] = memref.alloc(%m, %n) : memref<?x?xf64>
// CHECK-NEXT:    %[[DDC:.*]] = memref.alloc(%m, %n) : memref<?x?xf64>
// CHECK:         memref.store %{{.*}}, %[[DC1]][%{{.*}}, %{{.*}}]
// CHECK-NEXT:    memref.store %{{.*}}, %[[DDC]][%{{.*}}, %{{.*}}]
// CHECK:         %[[AT:.*]] = memref.reinterpret_cast %a to offset: [%{{.*}}], sizes: [%{{.*}}, %{{.*}}], strides: [%{{.*}}, %{{.*}}] : memref<?x?xf64> to memref<?x?xf64, strided<[?, ?], offset: ?>>
// CHECK-NEXT:    linalg.matmul ins(%[[AT]], %[[DC1]] : memref<?x?xf64, strided<[?, ?], offset: ?>>, memref<?x?xf64>) outs(%gx : memref<?x?xf64>)
// CHECK-NEXT:    linalg.matmul ins(%[[AT]], %[[DDC]] : memref<?x?xf64, strided<[?, ?], offset: ?>>, memref<?x?xf64>) outs(%dgx : memref<?x?xf64>)
// CHECK-NOT:     linalg.matmul
// CHECK:         func.return

// LLVM-LABEL: define void @"u.g_fwd_cdd_"(
// A stop with no array live goes straight to the one exit; with c live, to
// the block that frees it; with c and dc live, to the block that frees dc
// and then goes on to c's: no stop frees anything itself.
// LLVM:         call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 %"dx.size0", i64 -2, i64 %"x.size0")
// LLVM-NEXT:    br label %"early_exit"
// LLVM:       early_exit:
// LLVM-NEXT:    ret void
// LLVM:         br label %"free_on_stop"
// LLVM:       free_on_stop:
// LLVM-NEXT:    call void @"free"(ptr [[C:%.*]])
// LLVM-NEXT:    br label %"early_exit"
// LLVM:       free_on_stop.1:
// LLVM-NEXT:    call void @"free"(ptr
// LLVM-NEXT:    br label %"free_on_stop"

// NUM: hv 20 0 28 0
// NUM: grad 66 -13 94 -18

func.func @f(%a: memref<?x?xf64> {ad.noalias}, %x: memref<?x?xf64> {ad.noalias}) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f64
  %m = memref.dim %a, %c0 : memref<?x?xf64>
  %n = memref.dim %x, %c1 : memref<?x?xf64>
  %c = memref.alloc(%m, %n) : memref<?x?xf64>
  linalg.fill ins(%z : f64) outs(%c : memref<?x?xf64>)
  linalg.matmul ins(%a, %x : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  %s = scf.for %i = %c0 to %m step %c1 iter_args(%acc = %z) -> (f64) {
    %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc2 = %acc) -> (f64) {
      %v = memref.load %c[%i, %j] : memref<?x?xf64>
      %sq = arith.mulf %v, %v : f64
      %next = arith.addf %acc2, %sq : f64
      scf.yield %next : f64
    }
    scf.yield %r : f64
  }
  memref.dealloc %c : memref<?x?xf64>
  func.return %s : f64
}

func.func @g(%a: memref<?x?xf64> {ad.noalias}, %x: memref<?x?xf64> {ad.noalias}, %gx: memref<?x?xf64> {ad.noalias}) {
  %one = arith.constant 1.0 : f64
  ad.autodiff @f(%a, %x, %gx, %one) {activity = [const, dup], ret_activity = [active]} : (memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, f64) -> ()
  func.return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %a = memref.alloc(%c2, %c2) : memref<?x?xf64>
  %x = memref.alloc(%c2, %c2) : memref<?x?xf64>
  %v = memref.alloc(%c2, %c2) : memref<?x?xf64>
  %gx = memref.alloc(%c2, %c2) : memref<?x?xf64>
  %hv = memref.alloc(%c2, %c2) : memref<?x?xf64>
  linalg.fill ins(%zero : f64) outs(%v : memref<?x?xf64>)
  linalg.fill ins(%zero : f64) outs(%gx : memref<?x?xf64>)
  linalg.fill ins(%zero : f64) outs(%hv : memref<?x?xf64>)
  %a00 = arith.constant 1.0 : f64
  %a01 = arith.constant 2.0 : f64
  %a10 = arith.constant 3.0 : f64
  %a11 = arith.constant 4.0 : f64
  memref.store %a00, %a[%c0, %c0] : memref<?x?xf64>
  memref.store %a01, %a[%c0, %c1] : memref<?x?xf64>
  memref.store %a10, %a[%c1, %c0] : memref<?x?xf64>
  memref.store %a11, %a[%c1, %c1] : memref<?x?xf64>
  %x00 = arith.constant 0.5 : f64
  %x01 = arith.constant -1.0 : f64
  %x10 = arith.constant 2.0 : f64
  %x11 = arith.constant 0.25 : f64
  memref.store %x00, %x[%c0, %c0] : memref<?x?xf64>
  memref.store %x01, %x[%c0, %c1] : memref<?x?xf64>
  memref.store %x10, %x[%c1, %c0] : memref<?x?xf64>
  memref.store %x11, %x[%c1, %c1] : memref<?x?xf64>
  memref.store %one, %v[%c0, %c0] : memref<?x?xf64>
  ad.fwddiff @g(%a, %x, %v, %gx, %hv) {activity = [const, dup, dup], ret_activity = []} : (memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>, memref<?x?xf64>) -> ()
  %h00 = memref.load %hv[%c0, %c0] : memref<?x?xf64>
  %h01 = memref.load %hv[%c0, %c1] : memref<?x?xf64>
  %h10 = memref.load %hv[%c1, %c0] : memref<?x?xf64>
  %h11 = memref.load %hv[%c1, %c1] : memref<?x?xf64>
  printf.print_format "hv {} {} {} {}\n", %h00 : f64, %h01 : f64, %h10 : f64, %h11 : f64
  %g00 = memref.load %gx[%c0, %c0] : memref<?x?xf64>
  %g01 = memref.load %gx[%c0, %c1] : memref<?x?xf64>
  %g10 = memref.load %gx[%c1, %c0] : memref<?x?xf64>
  %g11 = memref.load %gx[%c1, %c1] : memref<?x?xf64>
  printf.print_format "grad {} {} {} {}\n", %g00 : f64, %g01 : f64, %g10 : f64, %g11 : f64
  func.return
}
