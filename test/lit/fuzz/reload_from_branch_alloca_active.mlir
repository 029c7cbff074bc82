// Fuzzer seed 4907 (long run): same bug as reload_from_branch_alloca.mlir,
// with activity analysis on: a load of the alloca %m0 of an scf.if branch,
// inside a loop, was planned as a reload (no finite cut).
// RUN: ad-run %s | filecheck %s
// Found by python -m adpasses.tools.fuzz (seed 4907), shrunk.
// Failure: compiler error: ValueError: no finite cut separates the needed values from the source
// Activities ['dup'] -> []; options Options(policy='minimal', activity=True, with_primal=False, opt_level=3, boundscheck=True).
// @main prints every primal value and derivative with `ok 1` when it matches the
// Python evaluation of @f (below) or central finite differences (docs/fuzzing.md).
//
// def f(x0):
//     if _cmp_ole(0.3, 1.0):
//         m0 = _np.full((4,), 1.0)
//         for i6 in range((1), (2), 1):
//             w1 = x0[(i6), (0):(0) + 3:1]
//             w1[(-2 + 2*i6)] = _minimum(w1.item((1 + i6)), m0.item((0)))
//     else:
//         pass
//     return ()

func.func @f(%x0: memref<?x?xf64>) {
  %cst2 = arith.constant 2.99999999999999989e-01 : f64
  %cst3 = arith.constant 1.00000000000000000e+00 : f64
  %c0 = arith.constant 0 : index
  %dim5 = memref.dim %x0, %c0 : memref<?x?xf64>
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %cm2 = arith.constant -2 : index
  %p1 = arith.cmpf ole, %cst2, %cst3 : f64
  scf.if %p1 {
    %m0 = memref.alloca(%dim5) : memref<?xf64>
    scf.for %fill6 = %c0 to %c4 step %c1 {
      memref.store %cst3, %m0[%fill6] : memref<?xf64>
      scf.yield
    }
    scf.for %i6 = %c1 to %c2 step %c1 {
      %w1 = memref.subview %x0[%i6, 0] [1, 3] [1, 1] : memref<?x?xf64> to memref<3xf64, strided<[?], offset: ?>>
      %ix10 = arith.addi %i6, %c1 : index
      %t9 = memref.load %w1[%ix10] : memref<3xf64, strided<[?], offset: ?>>
      %t11 = memref.load %m0[%c0] : memref<?xf64>
      %t8 = arith.minimumf %t9, %t11 : f64
      %ix12 = arith.muli %i6, %c2 : index
      %ix13 = arith.addi %ix12, %cm2 : index
      memref.store %t8, %w1[%ix13] : memref<3xf64, strided<[?], offset: ?>>
      scf.yield
    }
    scf.yield
  } else {
    scf.yield
  }
  func.return
}

func.func @main() {
  %k2 = arith.constant 12 : index
  %buf1 = memref.alloc(%k2) : memref<?xf64>
  %k3 = arith.constant 7.18106300223079863e-01 : f64
  %k4 = arith.constant 0 : index
  memref.store %k3, %buf1[%k4] : memref<?xf64>
  %k5 = arith.constant -2.23787954783249532e-01 : f64
  %k6 = arith.constant 1 : index
  memref.store %k5, %buf1[%k6] : memref<?xf64>
  %k7 = arith.constant -3.97979819444801208e-01 : f64
  %k8 = arith.constant 2 : index
  memref.store %k7, %buf1[%k8] : memref<?xf64>
  %k9 = arith.constant -3.60267201313896557e-01 : f64
  %k10 = arith.constant 3 : index
  memref.store %k9, %buf1[%k10] : memref<?xf64>
  %k11 = arith.constant -1.22609795688487844e+00 : f64
  %k12 = arith.constant 4 : index
  memref.store %k11, %buf1[%k12] : memref<?xf64>
  %k13 = arith.constant 4.14474893987609505e-01 : f64
  %k14 = arith.constant 5 : index
  memref.store %k13, %buf1[%k14] : memref<?xf64>
  %k15 = arith.constant -1.15537519487461315e+00 : f64
  %k16 = arith.constant 6 : index
  memref.store %k15, %buf1[%k16] : memref<?xf64>
  %k17 = arith.constant 1.43349711105760624e+00 : f64
  %k18 = arith.constant 7 : index
  memref.store %k17, %buf1[%k18] : memref<?xf64>
  %k19 = arith.constant 2.40706596426964570e-01 : f64
  %k20 = arith.constant 8 : index
  memref.store %k19, %buf1[%k20] : memref<?xf64>
  %k21 = arith.constant 6.38356397742717352e-01 : f64
  %k22 = arith.constant 9 : index
  memref.store %k21, %buf1[%k22] : memref<?xf64>
  %k23 = arith.constant 6.14015827869227149e-01 : f64
  %k24 = arith.constant 10 : index
  memref.store %k23, %buf1[%k24] : memref<?xf64>
  %k25 = arith.constant -7.18701830364474104e-01 : f64
  %k26 = arith.constant 11 : index
  memref.store %k25, %buf1[%k26] : memref<?xf64>
  %arg27 = memref.reinterpret_cast %buf1 to offset: [%k4], sizes: [%k12, %k10], strides: [%k10, %k6] : memref<?xf64> to memref<?x?xf64>
  func.call @f(%arg27) : (memref<?x?xf64>) -> ()
  %v28 = memref.load %buf1[%k4] : memref<?xf64>
  %d29 = arith.subf %v28, %k3 : f64
  %a30 = math.absf %d29 : f64
  %k32 = arith.constant 3.00000000000000039e-09 : f64
  %ok31 = arith.cmpf ole, %a30, %k32 : f64
  printf.print_format "primal buffer 0 element 0 = {} (expected 0.718106): ok {}\n", %v28 : f64, %ok31 : i1
  %v33 = memref.load %buf1[%k6] : memref<?xf64>
  %d34 = arith.subf %v33, %k5 : f64
  %a35 = math.absf %d34 : f64
  %ok36 = arith.cmpf ole, %a35, %k32 : f64
  printf.print_format "primal buffer 0 element 1 = {} (expected -0.223788): ok {}\n", %v33 : f64, %ok36 : i1
  %v37 = memref.load %buf1[%k8] : memref<?xf64>
  %d38 = arith.subf %v37, %k7 : f64
  %a39 = math.absf %d38 : f64
  %ok40 = arith.cmpf ole, %a39, %k32 : f64
  printf.print_format "primal buffer 0 element 2 = {} (expected -0.39798): ok {}\n", %v37 : f64, %ok40 : i1
  %v41 = memref.load %buf1[%k10] : memref<?xf64>
  %d42 = arith.subf %v41, %k13 : f64
  %a43 = math.absf %d42 : f64
  %ok44 = arith.cmpf ole, %a43, %k32 : f64
  printf.print_format "primal buffer 0 element 3 = {} (expected 0.414475): ok {}\n", %v41 : f64, %ok44 : i1
  %v45 = memref.load %buf1[%k12] : memref<?xf64>
  %d46 = arith.subf %v45, %k11 : f64
  %a47 = math.absf %d46 : f64
  %k49 = arith.constant 3.67829387065463590e-09 : f64
  %ok48 = arith.cmpf ole, %a47, %k49 : f64
  printf.print_format "primal buffer 0 element 4 = {} (expected -1.2261): ok {}\n", %v45 : f64, %ok48 : i1
  %v50 = memref.load %buf1[%k14] : memref<?xf64>
  %d51 = arith.subf %v50, %k13 : f64
  %a52 = math.absf %d51 : f64
  %ok53 = arith.cmpf ole, %a52, %k32 : f64
  printf.print_format "primal buffer 0 element 5 = {} (expected 0.414475): ok {}\n", %v50 : f64, %ok53 : i1
  %v54 = memref.load %buf1[%k16] : memref<?xf64>
  %d55 = arith.subf %v54, %k15 : f64
  %a56 = math.absf %d55 : f64
  %k58 = arith.constant 3.46612558462384001e-09 : f64
  %ok57 = arith.cmpf ole, %a56, %k58 : f64
  printf.print_format "primal buffer 0 element 6 = {} (expected -1.15538): ok {}\n", %v54 : f64, %ok57 : i1
  %v59 = memref.load %buf1[%k18] : memref<?xf64>
  %d60 = arith.subf %v59, %k17 : f64
  %a61 = math.absf %d60 : f64
  %k63 = arith.constant 4.30049133317281940e-09 : f64
  %ok62 = arith.cmpf ole, %a61, %k63 : f64
  printf.print_format "primal buffer 0 element 7 = {} (expected 1.4335): ok {}\n", %v59 : f64, %ok62 : i1
  %v64 = memref.load %buf1[%k20] : memref<?xf64>
  %d65 = arith.subf %v64, %k19 : f64
  %a66 = math.absf %d65 : f64
  %ok67 = arith.cmpf ole, %a66, %k32 : f64
  printf.print_format "primal buffer 0 element 8 = {} (expected 0.240707): ok {}\n", %v64 : f64, %ok67 : i1
  %v68 = memref.load %buf1[%k22] : memref<?xf64>
  %d69 = arith.subf %v68, %k21 : f64
  %a70 = math.absf %d69 : f64
  %ok71 = arith.cmpf ole, %a70, %k32 : f64
  printf.print_format "primal buffer 0 element 9 = {} (expected 0.638356): ok {}\n", %v68 : f64, %ok71 : i1
  %v72 = memref.load %buf1[%k24] : memref<?xf64>
  %d73 = arith.subf %v72, %k23 : f64
  %a74 = math.absf %d73 : f64
  %ok75 = arith.cmpf ole, %a74, %k32 : f64
  printf.print_format "primal buffer 0 element 10 = {} (expected 0.614016): ok {}\n", %v72 : f64, %ok75 : i1
  %v76 = memref.load %buf1[%k26] : memref<?xf64>
  %d77 = arith.subf %v76, %k25 : f64
  %a78 = math.absf %d77 : f64
  %ok79 = arith.cmpf ole, %a78, %k32 : f64
  printf.print_format "primal buffer 0 element 11 = {} (expected -0.718702): ok {}\n", %v76 : f64, %ok79 : i1
  %buf80 = memref.alloc(%k2) : memref<?xf64>
  memref.store %k3, %buf80[%k4] : memref<?xf64>
  memref.store %k5, %buf80[%k6] : memref<?xf64>
  memref.store %k7, %buf80[%k8] : memref<?xf64>
  memref.store %k9, %buf80[%k10] : memref<?xf64>
  memref.store %k11, %buf80[%k12] : memref<?xf64>
  memref.store %k13, %buf80[%k14] : memref<?xf64>
  memref.store %k15, %buf80[%k16] : memref<?xf64>
  memref.store %k17, %buf80[%k18] : memref<?xf64>
  memref.store %k19, %buf80[%k20] : memref<?xf64>
  memref.store %k21, %buf80[%k22] : memref<?xf64>
  memref.store %k23, %buf80[%k24] : memref<?xf64>
  memref.store %k25, %buf80[%k26] : memref<?xf64>
  %buf81 = memref.alloc(%k2) : memref<?xf64>
  %k82 = arith.constant -2.32606905144272708e-01 : f64
  memref.store %k82, %buf81[%k4] : memref<?xf64>
  %k83 = arith.constant 1.26429290606699118e+00 : f64
  memref.store %k83, %buf81[%k6] : memref<?xf64>
  %k84 = arith.constant -9.94543738407747790e-01 : f64
  memref.store %k84, %buf81[%k8] : memref<?xf64>
  %k85 = arith.constant 5.75673822429665139e-01 : f64
  memref.store %k85, %buf81[%k10] : memref<?xf64>
  %k86 = arith.constant -2.21319917116270054e-01 : f64
  memref.store %k86, %buf81[%k12] : memref<?xf64>
  %k87 = arith.constant -1.37638628010345210e+00 : f64
  memref.store %k87, %buf81[%k14] : memref<?xf64>
  %k88 = arith.constant 1.35903705708004419e-01 : f64
  memref.store %k88, %buf81[%k16] : memref<?xf64>
  %k89 = arith.constant -1.10489272035686459e+00 : f64
  memref.store %k89, %buf81[%k18] : memref<?xf64>
  %k90 = arith.constant -7.91118078773908162e-01 : f64
  memref.store %k90, %buf81[%k20] : memref<?xf64>
  %k91 = arith.constant 4.12548360961131177e-01 : f64
  memref.store %k91, %buf81[%k22] : memref<?xf64>
  %k92 = arith.constant -6.50938177866769330e-01 : f64
  memref.store %k92, %buf81[%k24] : memref<?xf64>
  %k93 = arith.constant -6.33236835129361908e-01 : f64
  memref.store %k93, %buf81[%k26] : memref<?xf64>
  %arg94 = memref.reinterpret_cast %buf80 to offset: [%k4], sizes: [%k12, %k10], strides: [%k10, %k6] : memref<?xf64> to memref<?x?xf64>
  %arg95 = memref.reinterpret_cast %buf81 to offset: [%k4], sizes: [%k12, %k10], strides: [%k10, %k6] : memref<?xf64> to memref<?x?xf64>
  ad.autodiff @f(%arg94, %arg95) {activity = [dup], ret_activity = []} : (memref<?x?xf64>, memref<?x?xf64>) -> ()
  %v96 = memref.load %buf80[%k4] : memref<?xf64>
  %d97 = arith.subf %v96, %k3 : f64
  %a98 = math.absf %d97 : f64
  %ok99 = arith.cmpf ole, %a98, %k32 : f64
  printf.print_format "gradient's primal buffer 0 element 0 = {} (expected 0.718106): ok {}\n", %v96 : f64, %ok99 : i1
  %v100 = memref.load %buf80[%k6] : memref<?xf64>
  %d101 = arith.subf %v100, %k5 : f64
  %a102 = math.absf %d101 : f64
  %ok103 = arith.cmpf ole, %a102, %k32 : f64
  printf.print_format "gradient's primal buffer 0 element 1 = {} (expected -0.223788): ok {}\n", %v100 : f64, %ok103 : i1
  %v104 = memref.load %buf80[%k8] : memref<?xf64>
  %d105 = arith.subf %v104, %k7 : f64
  %a106 = math.absf %d105 : f64
  %ok107 = arith.cmpf ole, %a106, %k32 : f64
  printf.print_format "gradient's primal buffer 0 element 2 = {} (expected -0.39798): ok {}\n", %v104 : f64, %ok107 : i1
  %v108 = memref.load %buf80[%k10] : memref<?xf64>
  %d109 = arith.subf %v108, %k13 : f64
  %a110 = math.absf %d109 : f64
  %ok111 = arith.cmpf ole, %a110, %k32 : f64
  printf.print_format "gradient's primal buffer 0 element 3 = {} (expected 0.414475): ok {}\n", %v108 : f64, %ok111 : i1
  %v112 = memref.load %buf80[%k12] : memref<?xf64>
  %d113 = arith.subf %v112, %k11 : f64
  %a114 = math.absf %d113 : f64
  %ok115 = arith.cmpf ole, %a114, %k49 : f64
  printf.print_format "gradient's primal buffer 0 element 4 = {} (expected -1.2261): ok {}\n", %v112 : f64, %ok115 : i1
  %v116 = memref.load %buf80[%k14] : memref<?xf64>
  %d117 = arith.subf %v116, %k13 : f64
  %a118 = math.absf %d117 : f64
  %ok119 = arith.cmpf ole, %a118, %k32 : f64
  printf.print_format "gradient's primal buffer 0 element 5 = {} (expected 0.414475): ok {}\n", %v116 : f64, %ok119 : i1
  %v120 = memref.load %buf80[%k16] : memref<?xf64>
  %d121 = arith.subf %v120, %k15 : f64
  %a122 = math.absf %d121 : f64
  %ok123 = arith.cmpf ole, %a122, %k58 : f64
  printf.print_format "gradient's primal buffer 0 element 6 = {} (expected -1.15538): ok {}\n", %v120 : f64, %ok123 : i1
  %v124 = memref.load %buf80[%k18] : memref<?xf64>
  %d125 = arith.subf %v124, %k17 : f64
  %a126 = math.absf %d125 : f64
  %ok127 = arith.cmpf ole, %a126, %k63 : f64
  printf.print_format "gradient's primal buffer 0 element 7 = {} (expected 1.4335): ok {}\n", %v124 : f64, %ok127 : i1
  %v128 = memref.load %buf80[%k20] : memref<?xf64>
  %d129 = arith.subf %v128, %k19 : f64
  %a130 = math.absf %d129 : f64
  %ok131 = arith.cmpf ole, %a130, %k32 : f64
  printf.print_format "gradient's primal buffer 0 element 8 = {} (expected 0.240707): ok {}\n", %v128 : f64, %ok131 : i1
  %v132 = memref.load %buf80[%k22] : memref<?xf64>
  %d133 = arith.subf %v132, %k21 : f64
  %a134 = math.absf %d133 : f64
  %ok135 = arith.cmpf ole, %a134, %k32 : f64
  printf.print_format "gradient's primal buffer 0 element 9 = {} (expected 0.638356): ok {}\n", %v132 : f64, %ok135 : i1
  %v136 = memref.load %buf80[%k24] : memref<?xf64>
  %d137 = arith.subf %v136, %k23 : f64
  %a138 = math.absf %d137 : f64
  %ok139 = arith.cmpf ole, %a138, %k32 : f64
  printf.print_format "gradient's primal buffer 0 element 10 = {} (expected 0.614016): ok {}\n", %v136 : f64, %ok139 : i1
  %v140 = memref.load %buf80[%k26] : memref<?xf64>
  %d141 = arith.subf %v140, %k25 : f64
  %a142 = math.absf %d141 : f64
  %ok143 = arith.cmpf ole, %a142, %k32 : f64
  printf.print_format "gradient's primal buffer 0 element 11 = {} (expected -0.718702): ok {}\n", %v140 : f64, %ok143 : i1
  %v144 = memref.load %buf81[%k4] : memref<?xf64>
  %k148 = arith.constant -2.32606905070653625e-01 : f64
  %d145 = arith.subf %v144, %k148 : f64
  %a146 = math.absf %d145 : f64
  %k149 = arith.constant 8.50421588773435529e-07 : f64
  %ok147 = arith.cmpf ole, %a146, %k149 : f64
  printf.print_format "shadow of buffer 0 (x0) element 0 = {} (expected -0.232607): ok {}\n", %v144 : f64, %ok147 : i1
  %v150 = memref.load %buf81[%k6] : memref<?xf64>
  %k154 = arith.constant 1.26429290614460399e+00 : f64
  %d151 = arith.subf %v150, %k154 : f64
  %a152 = math.absf %d151 : f64
  %k155 = arith.constant 3.94547959199528652e-06 : f64
  %ok153 = arith.cmpf ole, %a152, %k155 : f64
  printf.print_format "shadow of buffer 0 (x0) element 1 = {} (expected 1.26429): ok {}\n", %v150 : f64, %ok153 : i1
  %v156 = memref.load %buf81[%k8] : memref<?xf64>
  %k160 = arith.constant -9.94543738475073269e-01 : f64
  %d157 = arith.subf %v156, %k160 : f64
  %a158 = math.absf %d157 : f64
  %k161 = arith.constant 3.13290141991281931e-06 : f64
  %ok159 = arith.cmpf ole, %a158, %k161 : f64
  printf.print_format "shadow of buffer 0 (x0) element 2 = {} (expected -0.994544): ok {}\n", %v156 : f64, %ok159 : i1
  %v162 = memref.load %buf81[%k10] : memref<?xf64>
  %k166 = arith.constant 0.00000000000000000e+00 : f64
  %d163 = arith.subf %v162, %k166 : f64
  %a164 = math.absf %d163 : f64
  %k167 = arith.constant 1.49270204487599266e-07 : f64
  %ok165 = arith.cmpf ole, %a164, %k167 : f64
  printf.print_format "shadow of buffer 0 (x0) element 3 = {} (expected 0): ok {}\n", %v162 : f64, %ok165 : i1
  %v168 = memref.load %buf81[%k12] : memref<?xf64>
  %k172 = arith.constant -2.21319917226623059e-01 : f64
  %d169 = arith.subf %v168, %k172 : f64
  %a170 = math.absf %d169 : f64
  %k173 = arith.constant 8.15946434876110403e-07 : f64
  %ok171 = arith.cmpf ole, %a170, %k173 : f64
  printf.print_format "shadow of buffer 0 (x0) element 4 = {} (expected -0.22132): ok {}\n", %v168 : f64, %ok171 : i1
  %v174 = memref.load %buf81[%k14] : memref<?xf64>
  %k178 = arith.constant -8.00712457671437505e-01 : f64
  %d175 = arith.subf %v174, %k178 : f64
  %a176 = math.absf %d175 : f64
  %k179 = arith.constant 2.55473824657578707e-06 : f64
  %ok177 = arith.cmpf ole, %a176, %k179 : f64
  printf.print_format "shadow of buffer 0 (x0) element 5 = {} (expected -0.800712): ok {}\n", %v174 : f64, %ok177 : i1
  %v180 = memref.load %buf81[%k16] : memref<?xf64>
  %k184 = arith.constant 1.35903705753545295e-01 : f64
  %d181 = arith.subf %v180, %k184 : f64
  %a182 = math.absf %d181 : f64
  %k185 = arith.constant 5.59864081612388587e-07 : f64
  %ok183 = arith.cmpf ole, %a182, %k185 : f64
  printf.print_format "shadow of buffer 0 (x0) element 6 = {} (expected 0.135904): ok {}\n", %v180 : f64, %ok183 : i1
  %v186 = memref.load %buf81[%k18] : memref<?xf64>
  %k190 = arith.constant -1.10489272025477692e+00 : f64
  %d187 = arith.subf %v186, %k190 : f64
  %a188 = math.absf %d187 : f64
  %k191 = arith.constant 3.46627182001385070e-06 : f64
  %ok189 = arith.cmpf ole, %a188, %k191 : f64
  printf.print_format "shadow of buffer 0 (x0) element 7 = {} (expected -1.10489): ok {}\n", %v186 : f64, %ok189 : i1
  %v192 = memref.load %buf81[%k20] : memref<?xf64>
  %k196 = arith.constant -7.91118078824482041e-01 : f64
  %d193 = arith.subf %v192, %k196 : f64
  %a194 = math.absf %d193 : f64
  %k197 = arith.constant 2.52595511003492067e-06 : f64
  %ok195 = arith.cmpf ole, %a194, %k197 : f64
  printf.print_format "shadow of buffer 0 (x0) element 8 = {} (expected -0.791118): ok {}\n", %v192 : f64, %ok195 : i1
  %v198 = memref.load %buf81[%k22] : memref<?xf64>
  %k202 = arith.constant 4.12548361250486550e-01 : f64
  %d199 = arith.subf %v198, %k202 : f64
  %a200 = math.absf %d199 : f64
  %k203 = arith.constant 1.39357662638680967e-06 : f64
  %ok201 = arith.cmpf ole, %a200, %k203 : f64
  printf.print_format "shadow of buffer 0 (x0) element 9 = {} (expected 0.412548): ok {}\n", %v198 : f64, %ok201 : i1
  %v204 = memref.load %buf81[%k24] : memref<?xf64>
  %k208 = arith.constant -6.50938178026194691e-01 : f64
  %d205 = arith.subf %v204, %k208 : f64
  %a206 = math.absf %d205 : f64
  %k209 = arith.constant 2.10874607671393409e-06 : f64
  %ok207 = arith.cmpf ole, %a206, %k209 : f64
  printf.print_format "shadow of buffer 0 (x0) element 10 = {} (expected -0.650938): ok {}\n", %v204 : f64, %ok207 : i1
  %v210 = memref.load %buf81[%k26] : memref<?xf64>
  %k214 = arith.constant -6.33236835079209470e-01 : f64
  %d211 = arith.subf %v210, %k214 : f64
  %a212 = math.absf %d211 : f64
  %k215 = arith.constant 2.05064604426216523e-06 : f64
  %ok213 = arith.cmpf ole, %a212, %k215 : f64
  printf.print_format "shadow of buffer 0 (x0) element 11 = {} (expected -0.633237): ok {}\n", %v210 : f64, %ok213 : i1
  func.return
}

// CHECK: primal buffer 0 element 0 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 1 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 2 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 3 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 4 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 5 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 6 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 7 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 8 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 9 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 10 = {{.*}}: ok 1
// CHECK: primal buffer 0 element 11 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 0 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 1 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 2 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 3 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 4 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 5 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 6 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 7 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 8 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 9 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 10 = {{.*}}: ok 1
// CHECK: gradient's primal buffer 0 element 11 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 0 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 1 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 2 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 3 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 4 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 5 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 6 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 7 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 8 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 9 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 10 = {{.*}}: ok 1
// CHECK: shadow of buffer 0 (x0) element 11 = {{.*}}: ok 1
