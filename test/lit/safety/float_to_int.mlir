// RUN: ad-run %s | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir | filecheck %s --check-prefix=IR
// RUN: ad-opt %s --emit=llvm-ir --no-boundscheck | filecheck %s --check-prefix=NOCHECK
// RUN: not ad-run %S/Inputs/fptosi_nan.mlir 2>&1 | filecheck %s --check-prefix=NAN
// RUN: not ad-run %S/Inputs/fptosi_inf.mlir 2>&1 | filecheck %s --check-prefix=INF
// RUN: not ad-run %S/Inputs/fptosi_i32_range.mlir 2>&1 | filecheck %s --check-prefix=I32
// RUN: not ad-run %S/Inputs/fptoui_negative.mlir 2>&1 | filecheck %s --check-prefix=U16
//
// fptosi / fptoui of a value the integer type cannot hold (LLVM: poison)
// stops the call as Python's int() raises, with the op's location; values
// in range convert as before, truncating toward zero. With
// --no-boundscheck the check is gone (docs/safety.md).

// NAN: {{^}}{{.*}}fptosi_nan.mlir:4:3: error: ValueError: cannot convert float NaN to integer{{$}}
// INF: {{^}}{{.*}}fptosi_inf.mlir:5:3: error: OverflowError: cannot convert float infinity to integer{{$}}
// I32: {{^}}{{.*}}fptosi_i32_range.mlir:3:3: error: OverflowError: int(3000000000.0) does not fit in a signed 32-bit integer
// U16: {{^}}{{.*}}fptoui_negative.mlir:3:3: error: OverflowError: int(-1.0) does not fit in an unsigned 16-bit integer

// IR-LABEL: define i32 @"u.to_i32"(double %"x")
// IR:         fcmp ogt double %"x", 0xc1e0000000200000
// IR:         fcmp olt double %"x", 0x41e0000000000000
// IR:         [[BITS:%".*"]] = bitcast double %"x" to i64
// IR:         call void @"__adpasses_oob"(i64 {{[0-9]+}}, i64 [[BITS]], i64 -1099511627781, i64 32)
// IR:         fptosi double %"x" to i32
// NOCHECK-LABEL: define i32 @"u.to_i32"(double %"x")
// NOCHECK-NOT:   fcmp
// NOCHECK:       fptosi double %"x" to i32

func.func @to_i32(%x: f64) -> i32 {
  %i = arith.fptosi %x : f64 to i32
  func.return %i : i32
}

func.func @main() {
  // CHECK: -2147483648 2147483647 -3 0 255
  %a = arith.constant -2147483648.9 : f64
  %b = arith.constant 2147483647.9 : f64
  %c = arith.constant -3.99 : f64
  %d = arith.constant -0.9 : f32
  %e = arith.constant 255.5 : f16
  %ia = func.call @to_i32(%a) : (f64) -> i32
  %ib = func.call @to_i32(%b) : (f64) -> i32
  %ic = arith.fptosi %c : f64 to i64
  %id = arith.fptoui %d : f32 to i64
  %ie8 = arith.fptoui %e : f16 to i8
  %ie = arith.extui %ie8 : i8 to i64
  printf.print_format "{} {} {} {} {}\n", %ia : i32, %ib : i32, %ic : i64, %id : i64, %ie : i64
  // CHECK-NEXT: -9223372036854775808
  %m = arith.constant -9223372036854775808.0 : f64
  %im = arith.fptosi %m : f64 to i64
  printf.print_format "{}\n", %im : i64
  func.return
}
