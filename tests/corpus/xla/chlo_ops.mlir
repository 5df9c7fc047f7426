// Imitates: jax.jit of jax.scipy.special functions exported without CHLO legalization: chlo.erf_inv,
// chlo.lgamma, chlo.top_k beside StableHLO, one dim sharded.
module @jit_special attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x4xf32> {jax.result_info = "[0]"}, tensor<16x4xi32> {jax.result_info = "[1]"}) {
    %0 = chlo.erf_inv %arg0 : tensor<16x32xf32> -> tensor<16x32xf32>
    %1 = chlo.lgamma %0 : tensor<16x32xf32> -> tensor<16x32xf32>
    %values, %indices = chlo.top_k(%1, k = 4) : tensor<16x32xf32> -> (tensor<16x4xf32>, tensor<16x4xi32>)
    return %values, %indices : tensor<16x4xf32>, tensor<16x4xi32>
  }
}
