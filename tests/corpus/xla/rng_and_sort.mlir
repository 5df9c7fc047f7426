// Imitates: jax.random + jnp.sort under jax.jit: rng_bit_generator with its result group,
// a generic stablehlo.sort with a comparator region, shift/convert ops.
module @jit_shuffle attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xui64>) -> (tensor<128xf32> {jax.result_info = ""}) {
    %output_state, %output = stablehlo.rng_bit_generator %arg0, algorithm =  DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<128xui32>)
    %c = stablehlo.constant dense<9> : tensor<128xui32>
    %0 = stablehlo.shift_right_logical %output, %c : tensor<128xui32>
    %1 = stablehlo.convert %0 : (tensor<128xui32>) -> tensor<128xf32>
    %2 = "stablehlo.sort"(%1) <{dimension = 0 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %3 = stablehlo.compare  LT, %arg1, %arg2,  TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    }) : (tensor<128xf32>) -> tensor<128xf32>
    return %2 : tensor<128xf32>
  }
}
