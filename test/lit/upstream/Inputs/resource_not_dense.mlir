memref.global "private" constant @w : memref<3xf64> = sparse<[[0]], [1.0]>
