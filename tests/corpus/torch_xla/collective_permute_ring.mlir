// Imitates: torch_xla ring exchange (xm.collective_permute) as in ring attention: one step of a
// 4-device ring via source_target_pairs.
module @IrToHlo.31 attributes {mhlo.cross_program_prefetches = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<16x1024xf32>) -> tensor<16x1024xf32> {
    %0 = "stablehlo.collective_permute"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> : tensor<4x2xi64>}> : (tensor<16x1024xf32>) -> tensor<16x1024xf32>
    %1 = stablehlo.add %0, %arg0 : tensor<16x1024xf32>
    return %1 : tensor<16x1024xf32>
  }
}
