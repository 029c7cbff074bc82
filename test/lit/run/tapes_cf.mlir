// RUN: ad-run %s | filecheck %s
// Execution through ad-run: tapes give back values in LIFO order (a
// capacity tape and a growable one that doubles past 64 values), cf
// branches carry block arguments, index_switch picks a case, and printf
// prints f32 / i32 / i1 / index values.

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c100 = arith.constant 100 : index
  %t = ad.tape.create %c100 : !ad.tape<index>
  %g = ad.tape.create : !ad.tape<f64>
  scf.for %i = %c0 to %c100 step %c1 {
    ad.tape.push %i, %t : index, !ad.tape<index>
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    ad.tape.push %f, %g : f64, !ad.tape<f64>
  }
  %a = ad.tape.pop %t : !ad.tape<index> -> index
  %b = ad.tape.pop %t : !ad.tape<index> -> index
  %x = ad.tape.pop %g : !ad.tape<f64> -> f64
  // CHECK: popped 99 98 99
  printf.print_format "popped {} {} {}\n", %a : index, %b : index, %x : f64
  ad.tape.free %t : !ad.tape<index>
  ad.tape.free %g : !ad.tape<f64>

  // sum of 0..9 with a cf loop
  %c10 = arith.constant 10 : index
  cf.br ^head(%c0, %c0 : index, index)
^head(%i: index, %acc: index):
  %go = arith.cmpi slt, %i, %c10 : index
  cf.cond_br %go, ^body, ^done(%acc : index)
^body:
  %s = arith.addi %acc, %i : index
  %j = arith.addi %i, %c1 : index
  cf.br ^head(%j, %s : index, index)
^done(%sum: index):
  // CHECK-NEXT: cf sum = 45
  printf.print_format "cf sum = {}\n", %sum : index
  %w = scf.index_switch %c1 -> f32
  case 0 {
    %v = arith.constant 0.5 : f32
    scf.yield %v : f32
  }
  case 1 {
    %v = arith.constant 1.5 : f32
    scf.yield %v : f32
  }
  default {
    %v = arith.constant -1.0 : f32
    scf.yield %v : f32
  }
  %k = arith.constant -7 : i32
  %yes = arith.cmpf ogt, %w, %w : f32
  // CHECK-NEXT: switch = 1.5 i32 = -7 i1 = 0
  printf.print_format "switch = {} i32 = {} i1 = {}\n", %w : f32, %k : i32, %yes : i1
  func.return
}
