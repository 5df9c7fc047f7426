// Imitates: x.at[idx].add(v) under jax.jit with Shardy: stablehlo.scatter in generic form with
// its update region, operand sharded on the non-scattered dim.
module @jit_scatter attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%arg0: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}, %arg1: tensor<4x1xi32>, %arg2: tensor<4x32xf32>) -> (tensor<64x32xf32> {jax.result_info = ""}) {
    %0 = "stablehlo.scatter"(%arg0, %arg1, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %1 = stablehlo.add %arg3, %arg4 : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }) : (tensor<64x32xf32>, tensor<4x1xi32>, tensor<4x32xf32>) -> tensor<64x32xf32>
    return %0 : tensor<64x32xf32>
  }
}
