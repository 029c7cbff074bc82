// RUN: ad-opt %s --forward | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// Enzyme-MLIR ForwardMode/inactive_result.mlir: an index read out of an i64
// buffer passed as dup (integers carry no tangent) selects the active element
// that is squared in place.
// Hand derivation: j = idx[0] = 1; data[j] = data[j]^2, ddata[j] = 2*data[j]*ddata[j].
// data = (5, 3), ddata = (0.5, 0.25): data = (5, 9), ddata = (0.5, 1.5).

// The index is read once, from the primal: the i64 buffer's shadow is never
// read (only checked for its size).
// IR-LABEL: func.func @f_fwd_dd_(
// IR-SAME:  %[[IDX:[a-z0-9_]+]]: memref<?xi64>, %[[DIDX:[a-z0-9_]+]]: memref<?xi64>, %[[DATA:[a-z0-9_]+]]: memref<?xf64>, %[[DDATA:[a-z0-9_]+]]: memref<?xf64>)
// IR-NOT:     memref.load %[[DIDX]]
// IR:         %[[I:.*]] = memref.load %[[IDX]]
// IR-NEXT:    %[[J:.*]] = arith.index_cast %[[I]] : i64 to index
// IR-NOT:     memref.load %[[DIDX]]
// IR:         memref.load %[[DDATA]][%[[J]]]
// IR:         memref.store %{{.*}}, %[[DDATA]][%[[J]]]

func.func @f(%idx: memref<?xi64>, %data: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %i = memref.load %idx[%c0] : memref<?xi64>
  %j = arith.index_cast %i : i64 to index
  %v = memref.load %data[%j] : memref<?xf64>
  %s = arith.mulf %v, %v : f64
  memref.store %s, %data[%j] : memref<?xf64>
  func.return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1 : i64
  %five = arith.constant 5.0 : f64
  %three = arith.constant 3.0 : f64
  %half = arith.constant 0.5 : f64
  %quarter = arith.constant 0.25 : f64
  %idx = memref.alloc(%c1) : memref<?xi64>
  %didx = memref.alloc(%c1) : memref<?xi64>
  memref.store %one, %idx[%c0] : memref<?xi64>
  memref.store %one, %didx[%c0] : memref<?xi64>
  %data = memref.alloc(%c2) : memref<?xf64>
  %ddata = memref.alloc(%c2) : memref<?xf64>
  memref.store %five, %data[%c0] : memref<?xf64>
  memref.store %three, %data[%c1] : memref<?xf64>
  memref.store %half, %ddata[%c0] : memref<?xf64>
  memref.store %quarter, %ddata[%c1] : memref<?xf64>
  ad.fwddiff @f(%idx, %didx, %data, %ddata) {activity = [dup, dup], ret_activity = []} : (memref<?xi64>, memref<?xi64>, memref<?xf64>, memref<?xf64>) -> ()
  %d0 = memref.load %data[%c0] : memref<?xf64>
  %d1 = memref.load %data[%c1] : memref<?xf64>
  %t0 = memref.load %ddata[%c0] : memref<?xf64>
  %t1 = memref.load %ddata[%c1] : memref<?xf64>
  // CHECK: data = 5 9 ddata = 0.5 1.5
  printf.print_format "data = {} {} ddata = {} {}\n", %d0 : f64, %d1 : f64, %t0 : f64, %t1 : f64
  memref.dealloc %idx : memref<?xi64>
  memref.dealloc %didx : memref<?xi64>
  memref.dealloc %data : memref<?xf64>
  memref.dealloc %ddata : memref<?xf64>
  func.return
}
