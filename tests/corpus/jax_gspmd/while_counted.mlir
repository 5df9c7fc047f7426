// Imitates: jax.lax.fori_loop(0, 8, body, x) under the GSPMD partitioner: a counted while loop
// with a sharded carry, mhlo.frontend_attributes on the loop.
module @jit_loop attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<128x128xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}, %arg1: tensor<128x128xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<128x128xf32> {jax.result_info = "", mhlo.sharding = "{devices=[2,1]<=[2]}"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<8> : tensor<i32>
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_2 = %arg0) : tensor<i32>, tensor<128x128xf32> attributes {mhlo.frontend_attributes = {_scheduling_group_id = "0"}}
     cond {
      %1 = stablehlo.compare  LT, %iterArg, %c_0,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %1 = stablehlo.dot_general %iterArg_2, %arg1, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
      %2 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      stablehlo.return %2, %1 : tensor<i32>, tensor<128x128xf32>
    }
    return %0#1 : tensor<128x128xf32>
  }
}
