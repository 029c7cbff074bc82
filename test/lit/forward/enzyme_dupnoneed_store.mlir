// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/dupnoneed_store.mlir, its memref cases (@stm, @sta,
// @cst, @rdb, and @stm with dup); the llvm.store and llvm.intr.memset cases
// (@stl, @msz) are not in our dialects. A dupnoneed buffer's primal contents
// need not be right afterwards; its shadow must hold the tangent.
// Hand derivations at x = 3, dx = 0.5 (x*x = 9, 2*x*dx = 3):
// @stm: out[] = x*x: dout[] = 3 (dupnoneed); dup: out[] = 9, dout[] = 3.
// @sta: out[i] = x*x for i < 4: dout = 3 3 3 3.
// @cst: the store goes through a memref.cast: dout[] = 3.
// @rdb: store then load back, returning it: result (9, 3), dout[] = 3. The
// primal result reads the buffer, so it must still be 9 under dupnoneed.

// Tangent stores go to the shadow at the primal's indices (through the same
// view for @cst). Enzyme also drops the primal store under dupnoneed; adpasses
// keeps it (an optimisation it does not make; the values are the same).
// IR-LABEL: func.func @stm_fwd_dn_(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64, %[[OUT:[a-z0-9_]+]]: memref<f64>, %[[DOUT:[a-z0-9_]+]]: memref<f64>)
// IR:         memref.store %{{.*}}, %[[DOUT]][] {{.*}}: memref<f64>
// IR-LABEL: func.func @sta_fwd_dn_(
// IR-NOT:     affine.
// IR:         scf.for %[[I:.*]] = 
// IR:           memref.store %{{.*}}, %{{.*}}[%[[I]]] {{.*}}: memref<4xf64>
// IR-LABEL: func.func @cst_fwd_dn_(
// IR-SAME:  %[[X:[a-z0-9_]+]]: f64, %[[DX:[a-z0-9_]+]]: f64, %[[OUT:[a-z0-9_]+]]: memref<f64>, %[[DOUT:[a-z0-9_]+]]: memref<f64>)
// IR:         %[[DV:.*]] = "memref.cast"(%[[DOUT]])
// IR:         memref.store %{{.*}}, %[[DV]][] {{.*}}: memref<f64>

func.func @stm(%x: f64, %out: memref<f64>) {
  %sq = arith.mulf %x, %x : f64
  memref.store %sq, %out[] : memref<f64>
  func.return
}

func.func @sta(%x: f64, %out: memref<4xf64>) {
  affine.for %i = 0 to 4 {
    %sq = arith.mulf %x, %x : f64
    affine.store %sq, %out[%i] : memref<4xf64>
  }
  func.return
}

func.func @cst(%x: f64, %out: memref<f64>) {
  %v = "memref.cast"(%out) : (memref<f64>) -> memref<f64>
  %sq = arith.mulf %x, %x : f64
  memref.store %sq, %v[] : memref<f64>
  func.return
}

func.func @rdb(%x: f64, %out: memref<f64>) -> f64 {
  %sq = arith.mulf %x, %x : f64
  memref.store %sq, %out[] : memref<f64>
  %r = memref.load %out[] : memref<f64>
  func.return %r : f64
}

func.func @main() {
  %x = arith.constant 3.0 : f64
  %dx = arith.constant 0.5 : f64
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %out = memref.alloc() : memref<f64>
  %dout = memref.alloc() : memref<f64>
  memref.store %zero, %out[] : memref<f64>
  memref.store %zero, %dout[] : memref<f64>
  ad.fwddiff @stm(%x, %dx, %out, %dout) {activity = [dup, dupnoneed], ret_activity = []} : (f64, f64, memref<f64>, memref<f64>) -> ()
  %s1 = memref.load %dout[] : memref<f64>
  // CHECK: stm dupnoneed: dout = 3
  printf.print_format "stm dupnoneed: dout = {}\n", %s1 : f64
  memref.store %zero, %dout[] : memref<f64>
  ad.fwddiff @stm(%x, %dx, %out, %dout) {activity = [dup, dup], ret_activity = []} : (f64, f64, memref<f64>, memref<f64>) -> ()
  %p2 = memref.load %out[] : memref<f64>
  %s2 = memref.load %dout[] : memref<f64>
  // CHECK-NEXT: stm dup: out = 9 dout = 3
  printf.print_format "stm dup: out = {} dout = {}\n", %p2 : f64, %s2 : f64
  %out4 = memref.alloc() : memref<4xf64>
  %dout4 = memref.alloc() : memref<4xf64>
  ad.fwddiff @sta(%x, %dx, %out4, %dout4) {activity = [dup, dupnoneed], ret_activity = []} : (f64, f64, memref<4xf64>, memref<4xf64>) -> ()
  %a0 = memref.load %dout4[%c0] : memref<4xf64>
  %a1 = memref.load %dout4[%c1] : memref<4xf64>
  %a2 = memref.load %dout4[%c2] : memref<4xf64>
  %a3 = memref.load %dout4[%c3] : memref<4xf64>
  // CHECK-NEXT: sta: dout = 3 3 3 3
  printf.print_format "sta: dout = {} {} {} {}\n", %a0 : f64, %a1 : f64, %a2 : f64, %a3 : f64
  memref.store %zero, %dout[] : memref<f64>
  ad.fwddiff @cst(%x, %dx, %out, %dout) {activity = [dup, dupnoneed], ret_activity = []} : (f64, f64, memref<f64>, memref<f64>) -> ()
  %s3 = memref.load %dout[] : memref<f64>
  // CHECK-NEXT: cst: dout = 3
  printf.print_format "cst: dout = {}\n", %s3 : f64
  memref.store %zero, %out[] : memref<f64>
  memref.store %zero, %dout[] : memref<f64>
  %r, %dr = ad.fwddiff @rdb(%x, %dx, %out, %dout) {activity = [dup, dupnoneed], ret_activity = [dup]} : (f64, f64, memref<f64>, memref<f64>) -> (f64, f64)
  %s4 = memref.load %dout[] : memref<f64>
  // CHECK-NEXT: rdb: r = 9 dr = 3 dout = 3
  printf.print_format "rdb: r = {} dr = {} dout = {}\n", %r : f64, %dr : f64, %s4 : f64
  memref.dealloc %out : memref<f64>
  memref.dealloc %dout : memref<f64>
  memref.dealloc %out4 : memref<4xf64>
  memref.dealloc %dout4 : memref<4xf64>
  func.return
}
