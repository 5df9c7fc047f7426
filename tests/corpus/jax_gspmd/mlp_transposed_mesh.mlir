// Imitates: jax.jit(mlp, in_shardings=..., out_shardings=...).lower(...).as_text() with the
// GSPMD partitioner (JAX before Shardy): mhlo.sharding strings, mhlo.layout_mode, jax.result_info.
module @jit_mlp_transposed_mesh attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x64xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[4,2]<=[2,4]T(1,0)}"}, %arg1: tensor<64x128xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}, %arg2: tensor<128x64xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{replicated}"}) -> (tensor<64x64xf32> {jax.result_info = "", mhlo.layout_mode = "default", mhlo.sharding = "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x64xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
    %1 = stablehlo.tanh %0 : tensor<64x128xf32>
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<64x64xf32>
    return %2 : tensor<64x64xf32>
  }
}
