// Imitates: a jax.export of a function with no sharding annotations for 4 devices (mhlo.sharding = ""
// on every argument, mhlo.num_partitions = 4): estimated replicated, with a warning.
module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x64xf32> {mhlo.layout_mode = "default", mhlo.sharding = ""}) -> (tensor<64x64xf32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    return %0 : tensor<64x64xf32>
  }
}
