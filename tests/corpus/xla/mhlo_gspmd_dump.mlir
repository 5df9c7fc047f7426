// Imitates: a module in MHLO with GSPMD shardings, as older XLA dumps and pre-StableHLO JAX
// exports wrote it (mhlo.constant/add/dot_general/while/compare/return, mhlo.custom_call @Sharding).
module @jit_mhlo_step attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x64xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}, %arg1: tensor<64x64xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<16x64xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) {
    %0 = mhlo.constant dense<0> : tensor<i32>
    %1 = mhlo.constant dense<1> : tensor<i32>
    %2 = mhlo.constant dense<3> : tensor<i32>
    %3:2 = mhlo.while(%iterArg = %0, %iterArg_0 = %arg0) : tensor<i32>, tensor<16x64xf32>
     cond {
      %4 = mhlo.compare  LT, %iterArg, %2,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      mhlo.return %4 : tensor<i1>
    } do {
      %4 = "mhlo.dot_general"(%iterArg_0, %arg1) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<16x64xf32>, tensor<64x64xf32>) -> tensor<16x64xf32>
      %5 = mhlo.tanh %4 : tensor<16x64xf32>
      %6 = mhlo.add %iterArg, %1 : tensor<i32>
      mhlo.return %6, %5 : tensor<i32>, tensor<16x64xf32>
    }
    %7 = mhlo.custom_call @Sharding(%3#1) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<16x64xf32>) -> tensor<16x64xf32>
    return %7 : tensor<16x64xf32>
  }
}
