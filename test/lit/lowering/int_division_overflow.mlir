// RUN: ad-opt %s --emit=llvm-ir | filecheck %s
// RUN: ad-opt %s --emit=llvm-ir --no-boundscheck | filecheck %s
// A signed division by a divisor that may be -1 divides by 1 instead and
// negates the quotient: the most negative int by -1 overflows, and x86's
// idiv traps on it (SIGFPE). Ints wrap: the quotient is the dividend again
// (-(-2**63) wraps), the remainder 0 (srem by 1). Kept with
// --no-boundscheck: it is the semantics of wrapping ints, not a check.
// A constant divisor other than -1 needs nothing.

// CHECK-LABEL: define i64 @"u.div"
// CHECK:         %[[M:.+]] = icmp eq i64 %"b", -1
// CHECK-NEXT:    %[[D:.+]] = select i1 %[[M]], i64 1, i64 %"b"
// CHECK-NEXT:    %[[Q:.+]] = sdiv i64 %"a", %[[D]]
// CHECK-NEXT:    %[[N:.+]] = sub i64 0, %[[Q]]
// CHECK-NEXT:    select i1 %[[M]], i64 %[[N]], i64 %[[Q]]
func.func @div(%a: i64, %b: i64) -> i64 {
  %q = arith.divsi %a, %b : i64
  func.return %q : i64
}

// CHECK-LABEL: define i64 @"u.rem"
// CHECK:         %[[M:.+]] = icmp eq i64 %"b", -1
// CHECK-NEXT:    %[[D:.+]] = select i1 %[[M]], i64 1, i64 %"b"
// CHECK-NEXT:    srem i64 %"a", %[[D]]
func.func @rem(%a: i64, %b: i64) -> i64 {
  %r = arith.remsi %a, %b : i64
  func.return %r : i64
}

// CHECK-LABEL: define i64 @"u.floordiv"
// CHECK:         icmp eq i64 %"b", -1
// CHECK:         sdiv i64
// CHECK:         srem i64
// CHECK-LABEL: define i64 @"u.ceildiv"
// CHECK:         icmp eq i64 %"b", -1
func.func @floordiv(%a: i64, %b: i64) -> i64 {
  %q = arith.floordivsi %a, %b : i64
  func.return %q : i64
}
func.func @ceildiv(%a: i64, %b: i64) -> i64 {
  %q = arith.ceildivsi %a, %b : i64
  func.return %q : i64
}

// CHECK-LABEL: define i64 @"u.by_three"
// CHECK-NOT:     icmp eq i64 %{{.*}}, -1
// CHECK:         sdiv i64 %"a", 3
func.func @by_three(%a: i64) -> i64 {
  %c3 = arith.constant 3 : i64
  %q = arith.divsi %a, %c3 : i64
  func.return %q : i64
}
