// Imitates: jax.jit(layer_norm) with Shardy, batch sharded: reduce, rsqrt, convert f32<->bf16.
module @jit_layer_norm attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=8]>
  func.func public @main(%arg0: tensor<64x1024xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<64x1024xbf16> {jax.result_info = ""}) {
    %0 = stablehlo.convert %arg0 : (tensor<64x1024xbf16>) -> tensor<64x1024xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.multiply %0, %0 : tensor<64x1024xf32>
    %2 = stablehlo.reduce(%1 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<64x1024xf32>, tensor<f32>) -> tensor<64xf32>
    %cst_0 = stablehlo.constant dense<1.024000e+03> : tensor<64xf32>
    %3 = stablehlo.divide %2, %cst_0 : tensor<64xf32>
    %4 = stablehlo.rsqrt %3 : tensor<64xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<64xf32>) -> tensor<64x1024xf32>
    %6 = stablehlo.multiply %0, %5 : tensor<64x1024xf32>
    %7 = stablehlo.convert %6 : (tensor<64x1024xf32>) -> tensor<64x1024xbf16>
    return %7 : tensor<64x1024xbf16>
  }
}
