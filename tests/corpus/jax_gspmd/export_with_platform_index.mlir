// Imitates: jax.export for several platforms: a platform-index argument and a case dispatch
// are written by newer JAX; here the common single-platform form with jax.global_constant.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<16x16xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> (tensor<16x16xf32> {jax.result_info = ""}) {
    %0 = stablehlo.exponential %arg1 : tensor<16x16xf32>
    return %0 : tensor<16x16xf32>
  }
}
