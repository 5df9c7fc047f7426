// Imitates: Reactant.jl @compile of a sharded matmul (Sharding.NamedSharding over a 2x2 mesh):
// sdy meshes, tf.aliasing_output, enzymexla attributes on the function, a quoted symbol name.
module @reactant_matmul attributes {mhlo.num_partitions = 4 : i64, mhlo.num_replicas = 1 : i64} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<128x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {"x"}]>, tf.aliasing_output = 1 : i32}, %arg1: tensor<64x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<128x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}, tensor<128x64xf32>) attributes {enzymexla.memory_effects = []} {
    %0 = call @"*_broadcast_scalar"(%arg0, %arg1) : (tensor<128x64xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
    return %0, %arg0 : tensor<128x32xf32>, tensor<128x64xf32>
  }
  func.func private @"*_broadcast_scalar"(%arg0: tensor<128x64xf32>, %arg1: tensor<64x32xf32>) -> tensor<128x32xf32> attributes {enzymexla.memory_effects = []} {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<128x64xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
    return %0 : tensor<128x32xf32>
  }
}
