// Imitates: jnp.concatenate / jnp.pad / slicing under jax.jit with Shardy on a 2-axis mesh.
module @jit_shapes attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=2, "b"=2]>
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>}, %arg1: tensor<16x32xf32>) -> (tensor<34x32xf32> {jax.result_info = ""}) {
    %0 = stablehlo.concatenate %arg0, %arg1, dim = 0 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<32x32xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.pad %0, %cst, low = [2, 0], high = [2, 0], interior = [0, 0] : (tensor<32x32xf32>, tensor<f32>) -> tensor<36x32xf32>
    %2 = stablehlo.slice %1 [1:35, 0:32] : (tensor<36x32xf32>) -> tensor<34x32xf32>
    return %2 : tensor<34x32xf32>
  }
}
