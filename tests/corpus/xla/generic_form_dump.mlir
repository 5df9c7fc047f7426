// Imitates: an MLIR dump printed with --mlir-print-op-generic (XLA's --xla_dump_to with MLIR
// dumps): "builtin.module", "func.func" with properties, generic stablehlo and sdy ops.
"builtin.module"() <{sym_name = "jit_f"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, {}], function_type = (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<16x32xf32>, %arg1: tensor<32x8xf32>):
    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
    %1 = "stablehlo.tanh"(%0) : (tensor<16x8xf32>) -> tensor<16x8xf32>
    "func.return"(%1) : (tensor<16x8xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
