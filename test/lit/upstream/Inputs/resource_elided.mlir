module {
  memref.global "private" constant @w : memref<3xf64> = dense_resource<__elided__>
}
