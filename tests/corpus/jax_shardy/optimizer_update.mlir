// Imitates: an optax-style Adam update under jax.jit with Shardy (ZeRO-like sharded state):
// elementwise chains on sharded parameters, sqrt, constants broadcast.
module @jit_update attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["fsdp"=4]>
  func.func public @main(%arg0: tensor<1024x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {}]>}, %arg1: tensor<1024x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {}]>}, %arg2: tensor<1024x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"fsdp"}, {}]>}) -> (tensor<1024x256xf32> {jax.result_info = "[0]"}, tensor<1024x256xf32> {jax.result_info = "[1]"}) {
    %cst = stablehlo.constant dense<9.000000e-01> : tensor<1024x256xf32>
    %cst_0 = stablehlo.constant dense<1.000000e-01> : tensor<1024x256xf32>
    %cst_1 = stablehlo.constant dense<1.000000e-03> : tensor<1024x256xf32>
    %cst_2 = stablehlo.constant dense<9.99999993E-9> : tensor<1024x256xf32>
    %0 = stablehlo.multiply %arg1, %cst : tensor<1024x256xf32>
    %1 = stablehlo.multiply %arg2, %cst_0 : tensor<1024x256xf32>
    %2 = stablehlo.add %0, %1 : tensor<1024x256xf32>
    %3 = stablehlo.sqrt %2 : tensor<1024x256xf32>
    %4 = stablehlo.add %3, %cst_2 : tensor<1024x256xf32>
    %5 = stablehlo.divide %2, %4 : tensor<1024x256xf32>
    %6 = stablehlo.multiply %5, %cst_1 : tensor<1024x256xf32>
    %7 = stablehlo.subtract %arg0, %6 : tensor<1024x256xf32>
    return %7, %2 : tensor<1024x256xf32>, tensor<1024x256xf32>
  }
}
