// Imitates: torch_xla FSDP (XlaFullyShardedDataParallel) forward of one layer: all_gather of the
// parameter shard, matmul, reduce_scatter of the gradient, bf16.
module @IrToHlo.20 attributes {mhlo.cross_program_prefetches = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<32x512xbf16>, %arg1: tensor<512x512xbf16>) -> tensor<32x512xbf16> {
    %0 = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> : (tensor<32x512xbf16>) -> tensor<128x512xbf16>
    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : (tensor<128x512xbf16>, tensor<512x512xbf16>) -> tensor<128x512xbf16>
    %2 = "stablehlo.reduce_scatter"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
    ^bb0(%arg2: tensor<bf16>, %arg3: tensor<bf16>):
      %3 = stablehlo.add %arg2, %arg3 : tensor<bf16>
      stablehlo.return %3 : tensor<bf16>
    }) : (tensor<128x512xbf16>) -> tensor<32x512xbf16>
    return %2 : tensor<32x512xbf16>
  }
}
