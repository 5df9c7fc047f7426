// Imitates: a GSPMD module with a host-side value pinned to one device ({maximal device=0}) next
// to replicated and tiled arguments.
module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<32x32xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<32x32xf32> {mhlo.sharding = "{devices=[4,1]<=[4]}"}) -> (tensor<32x32xf32> {jax.result_info = ""}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<32x32xf32>
    %1 = stablehlo.multiply %0, %0 {mhlo.sharding = "{devices=[4,1]<=[4]}"} : tensor<32x32xf32>
    return %1 : tensor<32x32xf32>
  }
}
