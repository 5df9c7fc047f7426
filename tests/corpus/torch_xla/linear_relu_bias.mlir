// Imitates: torch_xla.stablehlo.exported_program_to_stablehlo of nn.Linear + ReLU: transposed
// weight (stablehlo.transpose), broadcast bias add, maximum with zero, f32, no shardings.
module @IrToHlo.18 attributes {mhlo.cross_program_prefetches = [], mhlo.is_dynamic = false, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<512xf32>, %arg1: tensor<512x256xf32>, %arg2: tensor<32x256xf32>) -> tensor<32x512xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<32x512xf32>
    %0 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<512x256xf32>) -> tensor<256x512xf32>
    %1 = stablehlo.dot_general %arg2, %0, contracting_dims = [1] x [0] : (tensor<32x256xf32>, tensor<256x512xf32>) -> tensor<32x512xf32>
    %2 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<512xf32>) -> tensor<32x512xf32>
    %3 = stablehlo.add %1, %2 : tensor<32x512xf32>
    %4 = stablehlo.maximum %3, %cst : tensor<32x512xf32>
    return %4 : tensor<32x512xf32>
  }
}
