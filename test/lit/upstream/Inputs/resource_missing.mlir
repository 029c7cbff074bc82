module {
  "memref.global"() <{constant, initial_value = dense_resource<weights> : tensor<3xf64>, sym_name = "w", sym_visibility = "private", type = memref<3xf64>}> : () -> ()
}
