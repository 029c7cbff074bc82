// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/dupnoneed_call.mlir: the stores live in a callee,
// reached through a memref.cast of a dupnoneed argument.
// Hand derivation: leaf stores x*x into out[]: dout[] = 2*x*dx; at x = 3,
// dx = 0.5: 3.

// The callee is inlined; the tangent store goes through the cast of the shadow.
// IR-LABEL: func.func @f_fwd_dn_(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64, %[[OUT:[a-z0-9_]+]]: memref<f64>, %[[DOUT:[a-z0-9_]+]]: memref<f64>)
// IR-NOT:     func.call
// IR:         %[[DC:.*]] = "memref.cast"(%[[DOUT]])
// IR:         memref.store %{{.*}}, %[[DC]][] {{.*}}: memref<f64>

func.func private @leaf(%x: f64, %out: memref<f64>) {
  %sq = arith.mulf %x, %x : f64
  memref.store %sq, %out[] : memref<f64>
  func.return
}

func.func @f(%x: f64, %out: memref<f64>) {
  %c = "memref.cast"(%out) : (memref<f64>) -> memref<f64>
  func.call @leaf(%x, %c) : (f64, memref<f64>) -> ()
  func.return
}

func.func @main() {
  %x = arith.constant 3.0 : f64
  %dx = arith.constant 0.5 : f64
  %zero = arith.constant 0.0 : f64
  %out = memref.alloc() : memref<f64>
  %dout = memref.alloc() : memref<f64>
  memref.store %zero, %dout[] : memref<f64>
  ad.fwddiff @f(%x, %dx, %out, %dout) {activity = [dup, dupnoneed], ret_activity = []} : (f64, f64, memref<f64>, memref<f64>) -> ()
  %s = memref.load %dout[] : memref<f64>
  // CHECK: dout = 3
  printf.print_format "dout = {}\n", %s : f64
  memref.dealloc %out : memref<f64>
  memref.dealloc %dout : memref<f64>
  func.return
}
