// Imitates: a Reactant.jl module as it reaches XLA with ops of other dialects at module level
// ("llvm.module_flags" in generic form, kept as written) beside the StableHLO function.
module @reactant_flags attributes {mhlo.num_partitions = 1 : i64, mhlo.num_replicas = 1 : i64} {
  "llvm.module_flags"() <{flags = [#llvm.mlir.module_flag<error, "reactant", 1 : i32>]}> : () -> ()
  func.func @main(%arg0: tensor<16xf32>) -> tensor<16xf32> {
    %0 = stablehlo.abs %arg0 : tensor<16xf32>
    return %0 : tensor<16xf32>
  }
}
