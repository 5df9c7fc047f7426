// Imitates: jax.lax.with_sharding_constraint under the GSPMD partitioner: custom_call @Sharding
// with mhlo.sharding, and backend_config "unspecified_dims" as jax writes for open dims.
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x128xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> (tensor<64x128xf32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.sine %arg0 : tensor<64x128xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {backend_config = "unspecified_dims=[0]", mhlo.sharding = "{devices=[1,4]<=[4]}"} : (tensor<64x128xf32>) -> tensor<64x128xf32>
    %2 = stablehlo.cosine %1 : tensor<64x128xf32>
    return %2 : tensor<64x128xf32>
  }
}
