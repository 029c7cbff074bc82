// RUN: ad-opt %s -p ad-lower-linalg | filecheck %s
// RUN: ad-opt %s --reverse | filecheck %s --check-prefix=GRAD
// ad-lower-linalg: an elementwise linalg.generic (with a broadcast input:
// a map that drops a dimension) becomes a nest of scf.for over the
// operands' sizes; a sum (a reduction iterator whose output map uses no
// reduction dimension) carries its accumulator through the reduction loop
// as an iter_arg, loaded before it and stored after; linalg.fill is a store
// loop. The reverse pipeline lowers them before differentiating.

// CHECK-LABEL: func.func @scale_rows
// CHECK-NOT:     linalg.
// CHECK:         %[[N:[0-9a-z_]+]] = memref.dim %x, %{{.*}} : memref<?x?xf64>
// CHECK:         %[[M:[0-9a-z_]+]] = memref.dim %x, %{{.*}} : memref<?x?xf64>
// CHECK:         scf.for %[[I:[0-9a-z_]+]] = %{{.*}} to %[[N]] step
// CHECK-NEXT:      scf.for %[[J:[0-9a-z_]+]] = %{{.*}} to %[[M]] step
// CHECK-NEXT:        %[[A:[0-9a-z_]+]] = memref.load %x[%[[I]], %[[J]]]
// CHECK-NEXT:        %[[B:[0-9a-z_]+]] = memref.load %s[%[[I]]]
// CHECK-NEXT:        %[[P:[0-9a-z_]+]] = arith.mulf %[[A]], %[[B]] : f64
// CHECK-NEXT:        %[[E:[0-9a-z_]+]] = math.exp %[[P]] : f64
// CHECK-NEXT:        memref.store %[[E]], %out[%[[I]], %[[J]]]
func.func @scale_rows(%x: memref<?x?xf64>, %s: memref<?xf64>, %out: memref<?x?xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<?x?xf64>, memref<?xf64>) outs(%out : memref<?x?xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %p = arith.mulf %a, %b : f64
    %e = math.exp %p : f64
    linalg.yield %e : f64
  }
  func.return
}

// CHECK-LABEL: func.func @energy
// CHECK:         memref.store %{{.*}}, %acc[] : memref<f64>
// CHECK:         %[[INIT:[0-9a-z_]+]] = memref.load %acc[] : memref<f64>
// CHECK:         %[[SUM:[0-9a-z_]+]] = scf.for %[[I:[0-9a-z_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S:[0-9a-z_]+]] = %[[INIT]]) -> (f64) {
// CHECK-NEXT:      %[[X:[0-9a-z_]+]] = memref.load %x[%[[I]]] : memref<?xf64>
// CHECK-NEXT:      %[[E:[0-9a-z_]+]] = math.exp %[[X]] : f64
// CHECK-NEXT:      %[[T:[0-9a-z_]+]] = arith.addf %[[S]], %[[E]] : f64
// CHECK-NEXT:      scf.yield %[[T]] : f64
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.store %[[SUM]], %acc[] : memref<f64>
// GRAD-LABEL: func.func @energy_grad
// GRAD-NOT:     linalg.
// GRAD:         math.exp
func.func @energy(%x: memref<?xf64>) -> f64 {
  %acc = memref.alloca() : memref<f64>
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%acc : memref<f64>)
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<?xf64>) outs(%acc : memref<f64>) {
  ^bb0(%a: f64, %s: f64):
    %e = math.exp %a : f64
    %t = arith.addf %s, %e : f64
    linalg.yield %t : f64
  }
  %r = memref.load %acc[] : memref<f64>
  func.return %r : f64
}

func.func @energy_grad(%x: memref<?xf64>, %dx: memref<?xf64>, %seed: f64) {
  ad.autodiff @energy(%x, %dx, %seed) {activity = [dup], ret_activity = [active]} : (memref<?xf64>, memref<?xf64>, f64) -> ()
  func.return
}
