// Imitates: jax.jit(mlp, in_shardings=..., out_shardings=...).lower(...).as_text() with the
// GSPMD partitioner (JAX before Shardy): mhlo.sharding strings, mhlo.layout_mode, jax.result_info.
module @jit_mlp_dp attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<256x128xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[8,1]<=[8]}"}, %arg1: tensor<128x512xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}, %arg2: tensor<512x128xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}) -> (tensor<256x128xf32> {jax.result_info = "", mhlo.layout_mode = "default", mhlo.sharding = "{devices=[8,1]<=[8]}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x128xf32>, tensor<128x512xf32>) -> tensor<256x512xf32>
    %1 = stablehlo.tanh %0 : tensor<256x512xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<256x512xf32>, tensor<512x128xf32>) -> tensor<256x128xf32>
    return %2 : tensor<256x128xf32>
  }
}
