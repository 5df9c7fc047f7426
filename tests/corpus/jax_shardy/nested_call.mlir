// Imitates: a nested jax.jit (or jax.named_call) exported with Shardy: the inner function
// stays a private func.func reached by func.call, with argument shardings on main.
module @jit_outer attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<64x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<64x64xf32>) -> (tensor<64x64xf32> {jax.result_info = ""}) {
    %0 = call @inner(%arg0, %arg1) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %1 = stablehlo.add %0, %arg0 : tensor<64x64xf32>
    return %1 : tensor<64x64xf32>
  }
  func.func private @inner(%arg0: tensor<64x64xf32>, %arg1: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    return %0 : tensor<64x64xf32>
  }
}
