// Imitates: an AQT/int8 quantized matmul exported from JAX: !quant.uniform types,
// uniform_quantize / uniform_dequantize around a float matmul, batch sharded.
module @jit_qmm attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2]>
  func.func public @main(%arg0: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<64x64xf32>) -> (tensor<32x64xf32> {jax.result_info = ""}) {
    %0 = stablehlo.uniform_quantize %arg0 : (tensor<32x64xf32>) -> tensor<32x64x!quant.uniform<i8:f32, 0.0039215482917486456:-128>>
    %1 = stablehlo.uniform_dequantize %0 : (tensor<32x64x!quant.uniform<i8:f32, 0.0039215482917486456:-128>>) -> tensor<32x64xf32>
    %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0] : (tensor<32x64xf32>, tensor<64x64xf32>) -> tensor<32x64xf32>
    return %2 : tensor<32x64xf32>
  }
}
