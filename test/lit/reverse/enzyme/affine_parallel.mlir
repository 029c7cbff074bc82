// Enzyme-MLIR ReverseMode/affine_parallel.mlir: y = x^2 elementwise in
// affine.parallel loops: constant bounds, a bound that is an argument, a
// step of 2, two dimensions, and a loop with an inactive chain
// (tanh(sin(exp(c)))^2 of a const array) scaling x. adpasses lowers
// affine.parallel to nested scf.for before differentiating, so the shadow
// update of x needs no atomic add (Enzyme's enzyme.atomic_rmw).
// Hand derivations (dx += dy * dy/dx, dy consumed: zeroed where y is
// written, untouched elsewhere); x = (1, 2, 3, 4), dy = 0.5, dx = 0:
// - foo (0 to 4): dx[i] = 2 x[i] dy[i] = (1, 2, 3, 4), dy = (0, 0, 0, 0);
// - nonconst_bound, len = 3: dx = (1, 2, 3, 0), dy = (0, 0, 0, 0.5);
// - non_1_step (0, 2): dx = (1, 0, 3, 0), dy = (0, 0.5, 0, 0.5);
// - par2d, x[i][j] = 3 i + j + 1, dy = 0.5: dx = x; the diagonal 1 5 9;
// - some_inactive, c[i][j] = 0.1 (3 i + j), dy = 0.5:
//   dx = tanh(sin(exp(c)))^2 dy; on the diagonal (c = 0, 0.4, 0.8):
//   0.235701 0.289014 0.217945.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @nonconst_bound_grad_ddc_(
// IR-NOT:     affine.parallel
// IR:         memref.alloc(%{{.*}}) {{.*}} : memref<?xf32>
// IR:         scf.for %arg9 = %{{.*}} to %len step
// IR:         scf.for
// IR:         memref.dealloc
// The step of 2: the reverse loop runs trip-count times and rebuilds the index.
// IR-LABEL: func.func @non_1_step_grad_dd_(
// IR:         memref.alloca() : memref<2xf32>
// IR:         scf.for
// IR:         scf.for
// IR:           arith.muli
// IR-LABEL: func.func @par2d_grad_dd_(
// IR:         memref.alloca() : memref<9xf32>
// IR:         scf.for
// IR-NEXT:      scf.for
// Only the inactive chain's last value is taped; the reverse sweep
// recomputes none of it.
// IR-LABEL: func.func @some_inactive_grad_dcd_(
// IR:         %[[T:.*]] = memref.alloca() : memref<9xf32>
// IR-NOT:     memref.alloca() : memref<9xf32>
// IR:         %[[I4:.*]] = arith.mulf %i3, %i3 : f32
// IR:         memref.store %[[I4]], %[[T]]
// IR:         memref.load %[[T]]
// IR-NOT:     math.
// IR:         func.return
// CHECK: foo dx 1 2 3 4 dy 0 0 0 0
// CHECK-NEXT: nonconst_bound dx 1 2 3 0 dy 0 0 0 0.5
// CHECK-NEXT: non_1_step dx 1 0 3 0 dy 0 0.5 0 0.5
// CHECK-NEXT: par2d dx 1 5 9
// CHECK-NEXT: some_inactive dx 0.235701 0.289014 0.217945

func.func @foo(%x: memref<?xf32>, %y: memref<?xf32>) {
  affine.parallel (%arg9) = (0) to (4) {
    %0 = memref.load %x[%arg9] : memref<?xf32>
    %1 = arith.mulf %0, %0 : f32
    affine.store %1, %y[%arg9] : memref<?xf32>
  }
  func.return
}

func.func @nonconst_bound(%x: memref<?xf32>, %y: memref<?xf32>, %len: index) {
  affine.parallel (%arg9) = (0) to (%len) {
    %0 = memref.load %x[%arg9] : memref<?xf32>
    %1 = arith.mulf %0, %0 : f32
    affine.store %1, %y[%arg9] : memref<?xf32>
  }
  func.return
}

func.func @non_1_step(%x: memref<?xf32>, %y: memref<?xf32>) {
  affine.parallel (%arg9) = (0) to (4) step (2) {
    %0 = memref.load %x[%arg9] : memref<?xf32>
    %1 = arith.mulf %0, %0 : f32
    affine.store %1, %y[%arg9] : memref<?xf32>
  }
  func.return
}

func.func @par2d(%x: memref<3x3xf32>, %y: memref<3x3xf32>) {
  affine.parallel (%iv, %jv) = (0, 0) to (3, 3) {
    %0 = affine.load %x[%iv, %jv] : memref<3x3xf32>
    %1 = arith.mulf %0, %0 : f32
    affine.store %1, %y[%iv, %jv] : memref<3x3xf32>
  }
  func.return
}

func.func @some_inactive(%x: memref<3x3xf32>, %inactive: memref<3x3xf32>, %y: memref<3x3xf32>) {
  affine.parallel (%iv, %jv) = (0, 0) to (3, 3) {
    %0 = affine.load %x[%iv, %jv] : memref<3x3xf32>
    %i0 = affine.load %inactive[%iv, %jv] : memref<3x3xf32>
    %i1 = math.exp %i0 : f32
    %i2 = math.sin %i1 : f32
    %i3 = math.tanh %i2 : f32
    %i4 = arith.mulf %i3, %i3 : f32
    %1 = arith.mulf %i4, %0 : f32
    affine.store %1, %y[%iv, %jv] : memref<3x3xf32>
  }
  func.return
}

// x[i] = i + 1, dx = 0, dy = 0.5 (y's contents do not matter).
func.func @fill(%x: memref<?xf32>, %dx: memref<?xf32>, %dy: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    %i64 = arith.index_cast %i : index to i64
    %f = arith.sitofp %i64 : i64 to f32
    %v = arith.addf %f, %one : f32
    memref.store %v, %x[%i] : memref<?xf32>
    memref.store %zero, %dx[%i] : memref<?xf32>
    memref.store %half, %dy[%i] : memref<?xf32>
  }
  func.return
}

func.func @show(%dx: memref<?xf32>, %dy: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %d0 = memref.load %dx[%c0] : memref<?xf32>
  %d1 = memref.load %dx[%c1] : memref<?xf32>
  %d2 = memref.load %dx[%c2] : memref<?xf32>
  %d3 = memref.load %dx[%c3] : memref<?xf32>
  %e0 = memref.load %dy[%c0] : memref<?xf32>
  %e1 = memref.load %dy[%c1] : memref<?xf32>
  %e2 = memref.load %dy[%c2] : memref<?xf32>
  %e3 = memref.load %dy[%c3] : memref<?xf32>
  printf.print_format "dx {} {} {} {} dy {} {} {} {}\n", %d0 : f32, %d1 : f32, %d2 : f32, %d3 : f32, %e0 : f32, %e1 : f32, %e2 : f32, %e3 : f32
  func.return
}

// x[i][j] = 3 i + j + 1, c[i][j] = 0.1 (3 i + j), dx = 0, dy = 0.5.
func.func @fill2d(%x: memref<3x3xf32>, %c: memref<3x3xf32>, %dx: memref<3x3xf32>, %dy: memref<3x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  %tenth = arith.constant 0.1 : f32
  %half = arith.constant 0.5 : f32
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      %i3 = arith.muli %i, %c3 : index
      %k = arith.addi %i3, %j : index
      %k64 = arith.index_cast %k : index to i64
      %f = arith.sitofp %k64 : i64 to f32
      %v = arith.addf %f, %one : f32
      %cv = arith.mulf %f, %tenth : f32
      memref.store %v, %x[%i, %j] : memref<3x3xf32>
      memref.store %cv, %c[%i, %j] : memref<3x3xf32>
      memref.store %zero, %dx[%i, %j] : memref<3x3xf32>
      memref.store %half, %dy[%i, %j] : memref<3x3xf32>
    }
  }
  func.return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %x = memref.alloc(%c4) : memref<?xf32>
  %dx = memref.alloc(%c4) : memref<?xf32>
  %y = memref.alloc(%c4) : memref<?xf32>
  %dy = memref.alloc(%c4) : memref<?xf32>

  func.call @fill(%x, %dx, %dy) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  ad.autodiff @foo(%x, %dx, %y, %dy) {activity = [dup, dup], ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  printf.print_format "foo "
  func.call @show(%dx, %dy) : (memref<?xf32>, memref<?xf32>) -> ()

  func.call @fill(%x, %dx, %dy) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  ad.autodiff @nonconst_bound(%x, %dx, %y, %dy, %c3) {activity = [dup, dup, const], ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, index) -> ()
  printf.print_format "nonconst_bound "
  func.call @show(%dx, %dy) : (memref<?xf32>, memref<?xf32>) -> ()

  func.call @fill(%x, %dx, %dy) : (memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  ad.autodiff @non_1_step(%x, %dx, %y, %dy) {activity = [dup, dup], ret_activity = []} : (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) -> ()
  printf.print_format "non_1_step "
  func.call @show(%dx, %dy) : (memref<?xf32>, memref<?xf32>) -> ()

  %x2 = memref.alloc() : memref<3x3xf32>
  %k2 = memref.alloc() : memref<3x3xf32>
  %dx2 = memref.alloc() : memref<3x3xf32>
  %y2 = memref.alloc() : memref<3x3xf32>
  %dy2 = memref.alloc() : memref<3x3xf32>
  func.call @fill2d(%x2, %k2, %dx2, %dy2) : (memref<3x3xf32>, memref<3x3xf32>, memref<3x3xf32>, memref<3x3xf32>) -> ()
  ad.autodiff @par2d(%x2, %dx2, %y2, %dy2) {activity = [dup, dup], ret_activity = []} : (memref<3x3xf32>, memref<3x3xf32>, memref<3x3xf32>, memref<3x3xf32>) -> ()
  %p0 = memref.load %dx2[%c0, %c0] : memref<3x3xf32>
  %p1 = memref.load %dx2[%c1, %c1] : memref<3x3xf32>
  %p2 = memref.load %dx2[%c2, %c2] : memref<3x3xf32>
  printf.print_format "par2d dx {} {} {}\n", %p0 : f32, %p1 : f32, %p2 : f32

  func.call @fill2d(%x2, %k2, %dx2, %dy2) : (memref<3x3xf32>, memref<3x3xf32>, memref<3x3xf32>, memref<3x3xf32>) -> ()
  ad.autodiff @some_inactive(%x2, %dx2, %k2, %y2, %dy2) {activity = [dup, const, dup], ret_activity = []} : (memref<3x3xf32>, memref<3x3xf32>, memref<3x3xf32>, memref<3x3xf32>, memref<3x3xf32>) -> ()
  %q0 = memref.load %dx2[%c0, %c0] : memref<3x3xf32>
  %q1 = memref.load %dx2[%c1, %c1] : memref<3x3xf32>
  %q2 = memref.load %dx2[%c2, %c2] : memref<3x3xf32>
  printf.print_format "some_inactive dx {} {} {}\n", %q0 : f32, %q1 : f32, %q2 : f32

  memref.dealloc %x : memref<?xf32>
  memref.dealloc %dx : memref<?xf32>
  memref.dealloc %y : memref<?xf32>
  memref.dealloc %dy : memref<?xf32>
  memref.dealloc %x2 : memref<3x3xf32>
  memref.dealloc %k2 : memref<3x3xf32>
  memref.dealloc %dx2 : memref<3x3xf32>
  memref.dealloc %y2 : memref<3x3xf32>
  memref.dealloc %dy2 : memref<3x3xf32>
  func.return
}
