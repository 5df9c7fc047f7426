// Imitates: a jax.jit attention block with Shardy, heads sharded on "model":
// batched dot_general, softmax through reduce max/sum, broadcast_in_dim, divide.
module @jit_attention attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["model"=4]>
  func.func public @main(%arg0: tensor<8x128x64xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}, {}]>}, %arg1: tensor<8x128x64xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}, {}]>}, %arg2: tensor<8x128x64xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}, {}]>}) -> (tensor<8x128x64xbf16> {jax.result_info = ""}) {
    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = [2] x [2] : (tensor<8x128x64xbf16>, tensor<8x128x64xbf16>) -> tensor<8x128x128xbf16>
    %cst = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.maximum across dimensions = [2] : (tensor<8x128x128xbf16>, tensor<bf16>) -> tensor<8x128xbf16>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<8x128xbf16>) -> tensor<8x128x128xbf16>
    %3 = stablehlo.subtract %0, %2 : tensor<8x128x128xbf16>
    %4 = stablehlo.exponential %3 : tensor<8x128x128xbf16>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
    %5 = stablehlo.reduce(%4 init: %cst_0) applies stablehlo.add across dimensions = [2] : (tensor<8x128x128xbf16>, tensor<bf16>) -> tensor<8x128xbf16>
    %6 = stablehlo.broadcast_in_dim %5, dims = [0, 1] : (tensor<8x128xbf16>) -> tensor<8x128x128xbf16>
    %7 = stablehlo.divide %4, %6 : tensor<8x128x128xbf16>
    %8 = stablehlo.dot_general %7, %arg2, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x128x128xbf16>, tensor<8x128x64xbf16>) -> tensor<8x128x64xbf16>
    return %8 : tensor<8x128x64xbf16>
  }
}
