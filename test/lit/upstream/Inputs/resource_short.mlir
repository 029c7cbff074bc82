memref.global "private" constant @w : memref<3xf64> = dense_resource<short>
{-#
  dialect_resources: {
    builtin: {
      short: "0x08000000000000000000E03F000000000000F0BF"
    }
  }
#-}
