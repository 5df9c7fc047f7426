// Imitates: jnp.fft.fft of a batch-sharded complex64 array (JAX with Shardy): complex types,
// stablehlo.fft with its enum, real/imag.
module @jit_fft attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["b"=2]>
  func.func public @main(%arg0: tensor<8x64xcomplex<f32>> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>}) -> (tensor<8x64xf32> {jax.result_info = ""}) {
    %0 = stablehlo.fft %arg0, type =  FFT, length = [64] : (tensor<8x64xcomplex<f32>>) -> tensor<8x64xcomplex<f32>>
    %1 = stablehlo.real %0 : (tensor<8x64xcomplex<f32>>) -> tensor<8x64xf32>
    %2 = stablehlo.imag %0 : (tensor<8x64xcomplex<f32>>) -> tensor<8x64xf32>
    %3 = stablehlo.add %1, %2 : tensor<8x64xf32>
    return %3 : tensor<8x64xf32>
  }
}
