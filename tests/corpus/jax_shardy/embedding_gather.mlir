// Imitates: jnp.take(embedding, ids, axis=0) under jax.jit with Shardy: stablehlo.gather with
// the vocabulary sharded, ids batch-sharded, clamp of indices as JAX writes it.
module @jit_embed attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<1024x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<16xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<16x64xf32> {jax.result_info = ""}) {
    %c = stablehlo.constant dense<0> : tensor<16xi32>
    %c_0 = stablehlo.constant dense<1023> : tensor<16xi32>
    %0 = stablehlo.clamp %c, %arg1, %c_0 : tensor<16xi32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<16xi32>) -> tensor<16x1xi32>
    %2 = "stablehlo.gather"(%arg0, %1) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 64>}> : (tensor<1024x64xf32>, tensor<16x1xi32>) -> tensor<16x64xf32>
    return %2 : tensor<16x64xf32>
  }
}
