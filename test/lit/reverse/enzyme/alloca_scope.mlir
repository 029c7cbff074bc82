// Enzyme-MLIR ReverseMode/alloca_scope.mlir: memref.alloca_scope (upstream's
// custom format, with and without a result) around a load, a math op and a
// store. The reverse sweep of a scope is a scope of its own (what it
// allocates is freed at its end); the overwritten value's tape is allocated
// outside both scopes, since it must live from one to the other.
// Hand derivations:
// - scope_overwrite: x[] <- cos(x[]); the shadow on entry seeds the final
//   contents: dx = -sin(x0) dx_in: at x0 = 0.5, dx_in = 2: -0.958851; x
//   ends as cos(0.5) = 0.877583;
// - scope_load_mul(x, c) = x[] c (dup, active -> active): dx += c dr,
//   dc = x[] dr: at x[] = 3, c = 1.5, dr = 2, dx_in = 0.25: dx = 3.25, dc = 6.
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s

// IR-LABEL: func.func @scope_overwrite_grad_d_(%x: memref<f32>, %dx: memref<f32>)
// IR:         %[[TAPE:.*]] = memref.alloca() : memref<1xf32>
// IR:         "memref.alloca_scope"() ({
// IR:           %[[V:.*]] = memref.load %x[]
// IR:           memref.store %[[V]], %[[TAPE]]
// IR:           math.cos
// IR:           memref.store %{{.*}}, %x[]
// IR:         "memref.alloca_scope"() ({
// IR:           %[[V2:.*]] = memref.load %[[TAPE]]
// IR:           memref.load %dx[]
// IR:           math.sin %[[V2]]
// IR:           memref.store %{{.*}}, %dx[]
// The scope with a result: its reverse scope returns the adjoint of %c; x
// is not overwritten, so the value is read again instead of taped.
// IR-LABEL: func.func @scope_load_mul_grad_da_a(
// IR-NOT:     memref.alloca(
// IR:         %[[R:.*]] = "memref.alloca_scope"() ({
// IR:         }) : () -> f64
// IR:         %[[DC:.*]] = "memref.alloca_scope"() ({
// IR:           memref.load %x[]
// IR:           "memref.alloca_scope.return"(%{{.*}}) : (f64) -> ()
// IR:         }) : () -> f64
// IR:         func.return %[[DC]] : f64
// CHECK: scope_overwrite dx -0.958851 x 0.877583
// CHECK-NEXT: scope_load_mul dx 3.25 dc 6

func.func private @scope_overwrite(%x: memref<f32>) {
  memref.alloca_scope {
    %val = memref.load %x[] : memref<f32>
    %cos = math.cos %val : f32
    memref.store %cos, %x[] : memref<f32>
  }
  func.return
}

func.func private @scope_load_mul(%x: memref<f64>, %c: f64) -> f64 {
  %r = memref.alloca_scope -> (f64) {
    %v = memref.load %x[] : memref<f64>
    %p = arith.mulf %v, %c : f64
    memref.alloca_scope.return %p : f64
  }
  func.return %r : f64
}

func.func @main() {
  %x = memref.alloc() : memref<f32>
  %dx = memref.alloc() : memref<f32>
  %x0 = arith.constant 0.5 : f32
  %two = arith.constant 2.0 : f32
  memref.store %x0, %x[] : memref<f32>
  memref.store %two, %dx[] : memref<f32>
  ad.autodiff @scope_overwrite(%x, %dx) {activity = [dup], ret_activity = []} : (memref<f32>, memref<f32>) -> ()
  %d = memref.load %dx[] : memref<f32>
  %xe = memref.load %x[] : memref<f32>
  printf.print_format "scope_overwrite dx {} x {}\n", %d : f32, %xe : f32

  %m = memref.alloc() : memref<f64>
  %dm = memref.alloc() : memref<f64>
  %three = arith.constant 3.0 : f64
  %quarter = arith.constant 0.25 : f64
  %c = arith.constant 1.5 : f64
  %dr = arith.constant 2.0 : f64
  memref.store %three, %m[] : memref<f64>
  memref.store %quarter, %dm[] : memref<f64>
  %dc = ad.autodiff @scope_load_mul(%m, %dm, %c, %dr) {activity = [dup, active], ret_activity = [active]} : (memref<f64>, memref<f64>, f64, f64) -> f64
  %dmv = memref.load %dm[] : memref<f64>
  printf.print_format "scope_load_mul dx {} dc {}\n", %dmv : f64, %dc : f64
  memref.dealloc %x : memref<f32>
  memref.dealloc %dx : memref<f32>
  memref.dealloc %m : memref<f64>
  memref.dealloc %dm : memref<f64>
  func.return
}
