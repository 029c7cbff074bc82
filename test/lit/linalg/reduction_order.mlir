// RUN: ad-opt %s -p ad-lower-linalg | filecheck %s
// ad-lower-linalg puts the loops of a reduction in its largest input's
// dimension order when the parallel-outside order would walk that input
// across its rows: `np.sum(X, axis=0)` of a row-major X sums a row at a
// time into the output (rows outside, columns inside: the inner loop is
// contiguous and vectorises), instead of a column at a time. The order
// follows the layout: the identity layout is row-major; static strides
// decide at compile time (a column-major view keeps the column walk); a
// dynamic strided layout gets both nests, chosen by the strides when the
// call runs (`scf.if`). A reduction along the last dimension (a row sum)
// keeps its accumulator in a register, as before.

// CHECK-LABEL: func.func @column_sums
// CHECK:         %[[M:[0-9a-z_]+]] = memref.dim %x, %{{.*}} : memref<?x?xf64>
// CHECK:         %[[N:[0-9a-z_]+]] = memref.dim %x, %{{.*}} : memref<?x?xf64>
// CHECK:         scf.for %[[I:[0-9a-z_]+]] = %{{.*}} to %[[M]] step
// CHECK-NEXT:      scf.for %[[J:[0-9a-z_]+]] = %{{.*}} to %[[N]] step
// CHECK-NEXT:        %[[A:[0-9a-z_]+]] = memref.load %x[%[[I]], %[[J]]]
// CHECK-NEXT:        %[[S:[0-9a-z_]+]] = memref.load %out[%[[J]]]
// CHECK-NEXT:        %[[T:[0-9a-z_]+]] = arith.addf %[[S]], %[[A]] : f64
// CHECK-NEXT:        memref.store %[[T]], %out[%[[J]]]
func.func @column_sums(%x: memref<?x?xf64>, %out: memref<?xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<?x?xf64>) outs(%out : memref<?xf64>) {
  ^bb0(%a: f64, %s: f64):
    %t = arith.addf %s, %a : f64
    linalg.yield %t : f64
  }
  func.return
}

// CHECK-LABEL: func.func @row_sums
// CHECK:         scf.for %[[I:[0-9a-z_]+]] =
// CHECK-NEXT:      %[[INIT:[0-9a-z_]+]] = memref.load %out[%[[I]]]
// CHECK:           scf.for %{{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (f64)
func.func @row_sums(%x: memref<?x?xf64>, %out: memref<?xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf64>) outs(%out : memref<?xf64>) {
  ^bb0(%a: f64, %s: f64):
    %t = arith.addf %s, %a : f64
    linalg.yield %t : f64
  }
  func.return
}

// A column-major view (static strides [1, 4]): the columns are contiguous,
// so the column walk (parallel outside, accumulator in a register) stays.
// CHECK-LABEL: func.func @column_major_view
// CHECK-NOT:     scf.if
// CHECK:         scf.for %[[J:[0-9a-z_]+]] =
// CHECK-NEXT:      %[[INIT:[0-9a-z_]+]] = memref.load %out[%[[J]]]
// CHECK:           scf.for %{{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (f64)
func.func @column_major_view(%x: memref<4x3xf64, strided<[1, 4]>>, %out: memref<3xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<4x3xf64, strided<[1, 4]>>) outs(%out : memref<3xf64>) {
  ^bb0(%a: f64, %s: f64):
    %t = arith.addf %s, %a : f64
    linalg.yield %t : f64
  }
  func.return
}

// Dynamic strides: |stride of the last dimension| <= |stride of the
// first| picks the row walk when the call runs.
// CHECK-LABEL: func.func @strided_view
// CHECK:         %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S0:[0-9a-z_]+]], %[[S1:[0-9a-z_]+]] = memref.extract_strided_metadata %x
// CHECK:         %[[A1:[0-9a-z_]+]] = arith.select %{{.*}}, %{{.*}}, %[[S1]] : index
// CHECK:         %[[A0:[0-9a-z_]+]] = arith.select %{{.*}}, %{{.*}}, %[[S0]] : index
// CHECK:         %[[ROWS:[0-9a-z_]+]] = arith.cmpi ule, %[[A1]], %[[A0]] : index
// CHECK-NEXT:    scf.if %[[ROWS]] {
// CHECK:           scf.for %[[I:[0-9a-z_]+]] =
// CHECK-NEXT:        scf.for %[[J:[0-9a-z_]+]] =
// CHECK-NEXT:          memref.load %x[%[[I]], %[[J]]]
// CHECK:         } else {
// CHECK:           scf.for %[[J2:[0-9a-z_]+]] =
// CHECK-NEXT:        memref.load %out[%[[J2]]]
// CHECK:             scf.for %{{.*}} iter_args
func.func @strided_view(%x: memref<?x?xf64, strided<[?, ?], offset: ?>>, %out: memref<?xf64>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<?x?xf64, strided<[?, ?], offset: ?>>) outs(%out : memref<?xf64>) {
  ^bb0(%a: f64, %s: f64):
    %t = arith.addf %s, %a : f64
    linalg.yield %t : f64
  }
  func.return
}
