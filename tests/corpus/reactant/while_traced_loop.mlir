// Imitates: Reactant.jl @trace for-loop: a stablehlo.while with i64 counters and an
// enzyme-style loop body, sdy sharding on the carried array.
module @reactant_loop attributes {mhlo.num_partitions = 2 : i64, mhlo.num_replicas = 1 : i64} {
  sdy.mesh @mesh = <["x"=2]>
  func.func @main(%arg0: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<64x64xf32> {
    %c = stablehlo.constant dense<0> : tensor<i64>
    %c_0 = stablehlo.constant dense<10> : tensor<i64>
    %c_1 = stablehlo.constant dense<1> : tensor<i64>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_2 = %arg0) : tensor<i64>, tensor<64x64xf32>
     cond {
      %1 = stablehlo.compare  LT, %iterArg, %c_0 : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %1 = stablehlo.add %iterArg, %c_1 : tensor<i64>
      %2 = stablehlo.cosine %iterArg_2 : tensor<64x64xf32>
      stablehlo.return %1, %2 : tensor<i64>, tensor<64x64xf32>
    }
    return %0#1 : tensor<64x64xf32>
  }
}
