// Imitates: shard_map under the GSPMD partitioner: @Sharding + @SPMDFullToShardShape, a call to
// the body, @Sharding {manual} + @SPMDShardToFullShape; the body psums over the mesh.
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<64x32xf32> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> (tensor<64x32xf32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<64x32xf32>) -> tensor<64x32xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<64x32xf32>) -> tensor<16x32xf32>
    %2 = call @shmap_body(%1) : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[4,1]<=[4]}"} : (tensor<16x32xf32>) -> tensor<64x32xf32>
    return %4 : tensor<64x32xf32>
  }
  func.func private @shmap_body(%arg0: tensor<16x32xf32>) -> (tensor<16x32xf32> {jax.result_info = "[None, None]"}) {
    %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = stablehlo.add %arg1, %arg2 : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) : (tensor<16x32xf32>) -> tensor<16x32xf32>
    return %0 : tensor<16x32xf32>
  }
}
