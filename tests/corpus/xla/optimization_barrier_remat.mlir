// Imitates: jax.checkpoint (remat) under jax.jit with Shardy: stablehlo.optimization_barrier
// around recomputed activations.
module @jit_remat attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<64x64xf32>) -> (tensor<32x64xf32> {jax.result_info = ""}) {
    %0:2 = stablehlo.optimization_barrier %arg0, %arg1 : tensor<32x64xf32>, tensor<64x64xf32>
    %1 = stablehlo.dot_general %0#0, %0#1, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    %2 = stablehlo.sine %1 : tensor<32x64xf32>
    return %2 : tensor<32x64xf32>
  }
}
