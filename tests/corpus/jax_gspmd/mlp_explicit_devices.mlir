// Imitates: jax.jit(mlp, in_shardings=..., out_shardings=...).lower(...).as_text() with the
// GSPMD partitioner (JAX before Shardy): mhlo.sharding strings, mhlo.layout_mode, jax.result_info.
module @jit_mlp_explicit_devices attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32x64xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[2,1,4]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"}, %arg1: tensor<64x256xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[1,8]<=[8]}"}, %arg2: tensor<256x64xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[8,1]<=[8]}"}) -> (tensor<32x64xf32> {jax.result_info = "", mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x256xf32>) -> tensor<32x256xf32>
    %1 = stablehlo.tanh %0 : tensor<32x256xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x256xf32>, tensor<256x64xf32>) -> tensor<32x64xf32>
    return %2 : tensor<32x64xf32>
  }
}
