# RUN: %python %s | filecheck %s
# np.argmax of a vector: numpy's ValueError for an empty one (ad.raise_if,
# before any element is read), then one scf.for from 1 carrying the best
# value and its index; a NaN wins once (the first NaN), and the index is
# the loop's second result, an np.int64 in Python (ad.numpy_results).
import numpy as np

from adpasses.frontend import ArrayArg, build_module


def peak(x):
    return np.argmax(x)


module, _ = build_module(peak, [ArrayArg("float64", 1, True)])
print(module)

# CHECK-LABEL: func.func @peak(%x: memref<?xf64>) -> index attributes {ad.numpy_results = ["int64"]}
# CHECK:         %[[N:[0-9a-z_]+]] = memref.dim %x
# CHECK:         %[[EMPTY:[0-9a-z_]+]] = arith.cmpi eq, %[[N]]
# CHECK-NEXT:    ad.raise_if %[[EMPTY]] {exception = "ValueError", message = "attempt to get argmax of an empty sequence"
# CHECK:         %[[FIRST:[0-9a-z_]+]] = memref.load %x[
# CHECK:         %{{[0-9a-z_]+}}, %[[INDEX:[0-9a-z_]+]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%{{.*}} = %[[FIRST]], %{{.*}} = %{{.*}}) -> (f64, index) {
# CHECK:           arith.cmpf ogt
# CHECK:           arith.cmpf uno
# CHECK:           scf.yield
# CHECK:         func.return %[[INDEX]] : index
