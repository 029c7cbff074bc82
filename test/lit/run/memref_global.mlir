// RUN: ad-opt %s --emit=llvm-ir | filecheck %s --check-prefix=IR
// RUN: ad-run %s | filecheck %s
// memref.global becomes an LLVM global array (constant and internal when
// the op says so; zero-initialised when uninitialized); get_global is a
// descriptor on it. Generic syntax here; the custom one parses too
// (test/lit/upstream/).

// IR: @"u.table" = internal constant [4 x double] [double 0x3ff0000000000000, double 0x4000000000000000, double 0x4008000000000000, double 0x4010000000000000]
// IR: @"u.counter" = global [1 x i64] zeroinitializer
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<2x2xf64>, initial_value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf64>, constant}> : () -> ()
"memref.global"() <{sym_name = "counter", sym_visibility = "public", type = memref<1xi64>, initial_value = unit}> : () -> ()

func.func private @bump() -> i64 {
  %c0 = arith.constant 0 : index
  %g = memref.get_global @counter : memref<1xi64>
  %k = memref.load %g[%c0] : memref<1xi64>
  %one = arith.constant 1 : i64
  %k1 = arith.addi %k, %one : i64
  memref.store %k1, %g[%c0] : memref<1xi64>
  func.return %k1 : i64
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = memref.get_global @table : memref<2x2xf64>
  %a = memref.load %t[%c1, %c0] : memref<2x2xf64>
  %b = memref.load %t[%c0, %c1] : memref<2x2xf64>
  // CHECK: table[1][0] = 3 table[0][1] = 2
  printf.print_format "table[1][0] = {} table[0][1] = {}\n", %a : f64, %b : f64
  %k1 = func.call @bump() : () -> i64
  %k2 = func.call @bump() : () -> i64
  // CHECK-NEXT: counter = 1 then 2
  printf.print_format "counter = {} then {}\n", %k1 : i64, %k2 : i64
  func.return
}
