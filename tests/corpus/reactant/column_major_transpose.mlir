// Imitates: Reactant.jl's column-major layout: Julia arrays reach StableHLO transposed, so
// every argument goes through stablehlo.transpose first; mhlo.sharding strings (GSPMD form).
module @reactant_f attributes {mhlo.num_partitions = 2 : i64, mhlo.num_replicas = 1 : i64} {
  func.func @main(%arg0: tensor<32x16xf32> {mhlo.sharding = "{devices=[1,2]<=[2]}"}) -> (tensor<32x16xf32> {mhlo.sharding = "{devices=[1,2]<=[2]}"}) attributes {enzymexla.memory_effects = []} {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<32x16xf32>) -> tensor<16x32xf32>
    %1 = stablehlo.sine %0 : tensor<16x32xf32>
    %2 = stablehlo.transpose %1, dims = [1, 0] : (tensor<16x32xf32>) -> tensor<32x16xf32>
    return %2 : tensor<32x16xf32>
  }
}
