// Imitates: torch_xla export of max_pool1d then softmax: stablehlo.reduce_window in generic form,
// reduce with a region, and the IrToHlo module naming.
module @IrToHlo.30 attributes {mhlo.cross_program_prefetches = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<8x64xf32>) -> tensor<8x32xf32> {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = "stablehlo.reduce_window"(%arg0, %cst) <{window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %5 = stablehlo.maximum %arg1, %arg2 : tensor<f32>
      stablehlo.return %5 : tensor<f32>
    }) : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x32xf32>
    %1 = stablehlo.exponential %0 : tensor<8x32xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<8xf32>) -> tensor<8x32xf32>
    %4 = stablehlo.divide %1, %3 : tensor<8x32xf32>
    return %4 : tensor<8x32xf32>
  }
}
