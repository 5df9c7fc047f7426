// Imitates: jax.lax.scan over 4 stacked layers (jax.jit, Shardy): a counted stablehlo.while
// whose body slices the layer's weight with dynamic_slice; fused and callsite locations.
module @jit_scan attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["model"=4]>
  func.func public @main(%arg0: tensor<32x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}, %arg1: tensor<4x128x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {"model"}]>}) -> (tensor<32x128xf32> {jax.result_info = ""}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<1> : tensor<i32>
    %c_1 = stablehlo.constant dense<4> : tensor<i32>
    %0:2 = stablehlo.while(%iterArg = %c, %iterArg_2 = %arg0) : tensor<i32>, tensor<32x128xf32>
     cond {
      %1 = stablehlo.compare  LT, %iterArg, %c_1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %1 : tensor<i1>
    } do {
      %c_3 = stablehlo.constant dense<0> : tensor<i32>
      %1 = stablehlo.dynamic_slice %arg1, %iterArg, %c_3, %c_3, sizes = [1, 128, 128] : (tensor<4x128x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128x128xf32>
      %2 = stablehlo.reshape %1 : (tensor<1x128x128xf32>) -> tensor<128x128xf32>
      %3 = stablehlo.dot_general %iterArg_2, %2, contracting_dims = [1] x [0] : (tensor<32x128xf32>, tensor<128x128xf32>) -> tensor<32x128xf32> loc(#loc3)
      %4 = stablehlo.tanh %3 : tensor<32x128xf32>
      %5 = stablehlo.add %iterArg, %c_0 : tensor<i32>
      stablehlo.return %5, %4 : tensor<i32>, tensor<32x128xf32>
    }
    return %0#1 : tensor<32x128xf32>
  }
}
#loc1 = loc("/app/model.py":77:8)
#loc2 = loc("/app/layers.py":12:4)
#loc3 = loc(fused<"jit(scan)/while/body/dot_general">[#loc1, callsite(#loc2 at #loc1)])
