// Inputs the tools reject with one line `file:line:col: error: ...` that says
// what is wrong and what to do, where xDSL or Python raised an exception
// before (r13_internal_errors: UnicodeDecodeError, "Unexpected attribute i32",
// OverflowError "float too large to pack", NotImplementedError printing an f80
// constant, AttributeError lowering printf of a memref). Parse-time problems
// are reported by ad-opt and ad-run alike; lowering problems by ad-run and
// ad-opt --emit=llvm-ir.

// RUN: not ad-run %S/Inputs/diag_binary.mlir 2>&1 | filecheck %s --check-prefix=BIN
// RUN: not ad-opt %S/Inputs/diag_binary.mlir 2>&1 | filecheck %s --check-prefix=BIN
// RUN: not ad-run %S/Inputs/diag_addf_i32.mlir 2>&1 | filecheck %s --check-prefix=ADDF
// RUN: not ad-opt %S/Inputs/diag_addf_i32.mlir 2>&1 | filecheck %s --check-prefix=ADDF
// RUN: not ad-run %S/Inputs/diag_addf_generic_index.mlir 2>&1 | filecheck %s --check-prefix=ADDFG
// RUN: not ad-opt %S/Inputs/diag_addf_generic_index.mlir 2>&1 | filecheck %s --check-prefix=ADDFG
// RUN: not ad-run %S/Inputs/diag_addi_f64.mlir 2>&1 | filecheck %s --check-prefix=ADDI
// RUN: not ad-opt %S/Inputs/diag_addi_f64.mlir 2>&1 | filecheck %s --check-prefix=ADDI
// RUN: not ad-run %S/Inputs/diag_exp_i64.mlir 2>&1 | filecheck %s --check-prefix=EXP
// RUN: not ad-opt %S/Inputs/diag_exp_i64.mlir 2>&1 | filecheck %s --check-prefix=EXP
// RUN: not ad-run %S/Inputs/diag_mulf_mixed.mlir 2>&1 | filecheck %s --check-prefix=MIXED
// RUN: not ad-opt %S/Inputs/diag_mulf_mixed.mlir 2>&1 | filecheck %s --check-prefix=MIXED
// RUN: not ad-run %S/Inputs/diag_cmpf_generic_i32.mlir 2>&1 | filecheck %s --check-prefix=CMPF
// RUN: not ad-opt %S/Inputs/diag_cmpf_generic_i32.mlir 2>&1 | filecheck %s --check-prefix=CMPF
// RUN: not ad-run %S/Inputs/diag_xori_f64.mlir 2>&1 | filecheck %s --check-prefix=XORI
// RUN: not ad-opt %S/Inputs/diag_xori_f64.mlir 2>&1 | filecheck %s --check-prefix=XORI
// RUN: not ad-run %S/Inputs/diag_f32_literal.mlir 2>&1 | filecheck %s --check-prefix=F32
// RUN: not ad-opt %S/Inputs/diag_f32_literal.mlir 2>&1 | filecheck %s --check-prefix=F32
// RUN: not ad-run %S/Inputs/diag_f16_literal.mlir 2>&1 | filecheck %s --check-prefix=F16
// RUN: not ad-opt %S/Inputs/diag_f16_literal.mlir 2>&1 | filecheck %s --check-prefix=F16
// RUN: not ad-run %S/Inputs/diag_f64_literal.mlir 2>&1 | filecheck %s --check-prefix=F64
// RUN: not ad-opt %S/Inputs/diag_f64_literal.mlir 2>&1 | filecheck %s --check-prefix=F64
// RUN: not ad-run %S/Inputs/diag_f80_literal.mlir 2>&1 | filecheck %s --check-prefix=F80
// RUN: not ad-opt %S/Inputs/diag_f80_literal.mlir 2>&1 | filecheck %s --check-prefix=F80
// RUN: not ad-run %S/Inputs/diag_f128_literal.mlir 2>&1 | filecheck %s --check-prefix=F128
// RUN: not ad-opt %S/Inputs/diag_f128_literal.mlir 2>&1 | filecheck %s --check-prefix=F128
// RUN: not ad-run %S/Inputs/diag_f80_arith.mlir 2>&1 | filecheck %s --check-prefix=F80LOWER
// RUN: not ad-opt --emit=llvm-ir %S/Inputs/diag_f80_arith.mlir 2>&1 | filecheck %s --check-prefix=F80LOWER
// RUN: not ad-run %S/Inputs/diag_printf_memref.mlir 2>&1 | filecheck %s --check-prefix=PRINTM
// RUN: not ad-opt --emit=llvm-ir %S/Inputs/diag_printf_memref.mlir 2>&1 | filecheck %s --check-prefix=PRINTM
// RUN: not ad-run %S/Inputs/diag_printf_i128.mlir 2>&1 | filecheck %s --check-prefix=PRINTI
// RUN: not ad-opt --emit=llvm-ir %S/Inputs/diag_printf_i128.mlir 2>&1 | filecheck %s --check-prefix=PRINTI
// RUN: not ad-opt --reverse %S/Inputs/diag_autodiff_bf16.mlir 2>&1 | filecheck %s --check-prefix=BF16AD
// RUN: not ad-run --entry main %S/Inputs/diag_autodiff_bf16.mlir 2>&1 | filecheck %s --check-prefix=BF16AD
// RUN: not ad-run < %S/Inputs/diag_binary.mlir 2>&1 | filecheck %s --check-prefix=STDIN
// RUN: not ad-run %S/Inputs/no_such_file.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: ad-run %S/Inputs/diag_hex_inf.mlir | filecheck %s --check-prefix=HEX

// BIN: {{^.*}}Inputs/diag_binary.mlir:1:1: error: the input is not UTF-8 text (byte 0xe1 cannot be decoded; is it a binary file?): MLIR input must be UTF-8 text
// BIN-NOT: {{.}}
// ADDF: {{^.*}}Inputs/diag_addf_i32.mlir:3:3: error: 'arith.addf' works on floating-point values (f16, f32, f64, or vectors of them), not i32; for integers use arith.addi
// ADDF-NOT: {{.}}
// ADDFG: {{^.*}}Inputs/diag_addf_generic_index.mlir:3:3: error: 'arith.addf' works on floating-point values (f16, f32, f64, or vectors of them), not index; for integers use arith.addi
// ADDFG-NOT: {{.}}
// ADDI: {{^.*}}Inputs/diag_addi_f64.mlir:3:3: error: 'arith.addi' works on integers and index, not f64; for floats use arith.addf
// ADDI-NOT: {{.}}
// EXP: {{^.*}}Inputs/diag_exp_i64.mlir:3:3: error: 'math.exp' works on floating-point values (f16, f32, f64, or vectors of them), not i64; convert the integer with arith.sitofp (or arith.uitofp) first
// EXP-NOT: {{.}}
// MIXED: {{^.*}}Inputs/diag_mulf_mixed.mlir:4:3: error: 'arith.mulf' needs its operands and result to have one type, got f32 and f64; convert with arith.extf or arith.truncf first
// MIXED-NOT: {{.}}
// CMPF: {{^.*}}Inputs/diag_cmpf_generic_i32.mlir:3:3: error: 'arith.cmpf' works on floating-point values (f16, f32, f64, or vectors of them), not i32; for integers use arith.cmpi
// CMPF-NOT: {{.}}
// XORI: {{^.*}}Inputs/diag_xori_f64.mlir:3:3: error: 'arith.xori' works on integers and index, not f64; bitwise operations on a float need arith.bitcast to an integer first
// XORI-NOT: {{.}}
// F32: {{^.*}}Inputs/diag_f32_literal.mlir:2:23: error: float literal 1.0e50 is out of range for f32 (largest finite value 3.40282347e+38); use a smaller value or f64
// F32-NOT: {{.}}
// F16: {{^.*}}Inputs/diag_f16_literal.mlir:2:23: error: float literal -70000.0 is out of range for f16 (largest finite value 65504); use a smaller value or f64
// F16-NOT: {{.}}
// F64: {{^.*}}Inputs/diag_f64_literal.mlir:2:23: error: float literal 1.0e400 is out of range for f64 (largest finite value 1.79769313e+308); use a smaller value; write 0x7FF0000000000000 for infinity
// F64-NOT: {{.}}
// F80: {{^.*}}Inputs/diag_f80_literal.mlir:2:23: error: f80 literals are not supported (xDSL 0.74 can neither print nor compile them); use f64
// F80-NOT: {{.}}
// F128: {{^.*}}Inputs/diag_f128_literal.mlir:2:23: error: f128 literals are not supported (xDSL 0.74 can neither print nor compile them); use f64
// F128-NOT: {{.}}
// F80LOWER: {{^.*}}Inputs/diag_f80_arith.mlir:3:3: error: 'arith.extf': type f80 is not supported by the LLVM lowering (scalars must be f16, f32, f64, an integer type or index)
// F80LOWER-NOT: {{.}}
// PRINTM: {{^.*}}Inputs/diag_printf_memref.mlir:4:3: error: 'printf.print_format': cannot print value 1 of type memref<?xf64>: it prints floats (f16, f32, f64), integers of up to 64 bits and index; print its elements, loaded with memref.load
// PRINTM-NOT: {{.}}
// PRINTI: {{^.*}}Inputs/diag_printf_i128.mlir:4:3: error: 'printf.print_format': cannot print value 2 of type i128: it prints floats (f16, f32, f64), integers of up to 64 bits and index; convert it first (arith.extf/truncf, arith.trunci)
// PRINTI-NOT: {{.}}
// BF16AD: {{^.*}}Inputs/diag_autodiff_bf16.mlir:6:3: error: 'ad.autodiff' op argument 0 is 'active' but has type bf16; derivatives are computed in f16, f32 or f64 only; convert to one of them
// BF16AD-NOT: {{.}}
// STDIN: {{^}}<stdin>:1:1: error: the input is not UTF-8 text {{.*}}: MLIR input must be UTF-8 text{{$}}
// STDIN-NOT: {{.}}
// MISSING: {{^}}error: cannot read '{{.*}}no_such_file.mlir': No such file or directory
// MISSING-NOT: {{.}}
// HEX: inf -inf 3.40282e+38
