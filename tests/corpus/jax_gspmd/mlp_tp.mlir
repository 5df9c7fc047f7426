// Imitates: jax.jit(mlp, in_shardings=..., out_shardings=...).lower(...).as_text() with the
// GSPMD partitioner (JAX before Shardy): mhlo.sharding strings, mhlo.layout_mode, jax.result_info.
module @jit_mlp_tp attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x256xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}, %arg1: tensor<256x1024xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[1,4]<=[4]}"}, %arg2: tensor<1024x256xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> (tensor<64x256xf32> {jax.result_info = "", mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xf32>, tensor<256x1024xf32>) -> tensor<64x1024xf32>
    %1 = stablehlo.tanh %0 : tensor<64x1024xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x1024xf32>, tensor<1024x256xf32>) -> tensor<64x256xf32>
    return %2 : tensor<64x256xf32>
  }
}
