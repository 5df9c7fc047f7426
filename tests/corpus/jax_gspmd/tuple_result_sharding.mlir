// Imitates: jax.jit returning two values from a multi-result reduce under GSPMD: a tuple
// mhlo.sharding on the op, shardings on two results.
module @jit_argmax attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x64xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}, %arg1: tensor<16x64xi32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> (tensor<16xf32> {jax.result_info = "[0]", mhlo.sharding = "{devices=[2]<=[2]}"}, tensor<16xi32> {jax.result_info = "[1]", mhlo.sharding = "{devices=[2]<=[2]}"}) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0:2 = stablehlo.reduce(%arg0 init: %cst), (%arg1 init: %c) across dimensions = [1] {mhlo.sharding = "{{devices=[2]<=[2]}, {devices=[2]<=[2]}}"} : (tensor<16x64xf32>, tensor<16x64xi32>, tensor<f32>, tensor<i32>) -> (tensor<16xf32>, tensor<16xi32>)
     reducer(%arg2: tensor<f32>, %arg4: tensor<f32>) (%arg3: tensor<i32>, %arg5: tensor<i32>)  {
      %1 = stablehlo.compare  GT, %arg2, %arg4,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %2 = stablehlo.select %1, %arg2, %arg4 : tensor<i1>, tensor<f32>
      %3 = stablehlo.select %1, %arg3, %arg5 : tensor<i1>, tensor<i32>
      stablehlo.return %2, %3 : tensor<f32>, tensor<i32>
    }
    return %0#0, %0#1 : tensor<16xf32>, tensor<16xi32>
  }
}
