// Imitates: jax.lax.with_sharding_constraint inside jax.jit with Shardy:
// sdy.sharding_constraint between two matmuls, named_scope locations.
module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<128x256xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<256x512xbf16>, %arg2: tensor<512x256xbf16>) -> (tensor<128x256xbf16> {jax.result_info = ""}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<128x256xbf16>, tensor<256x512xbf16>) -> tensor<128x512xbf16> loc(#loc2)
    %1 = sdy.sharding_constraint %0 <@mesh, [{"data"}, {"model"}]> : tensor<128x512xbf16> loc(#loc3)
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0] : (tensor<128x512xbf16>, tensor<512x256xbf16>) -> tensor<128x256xbf16> loc(#loc4)
    return %2 : tensor<128x256xbf16>
  }
}
#loc1 = loc("/app/train.py":40:10)
#loc2 = loc("jit(f)/jit(main)/encoder/dense_0/dot_general"(#loc1))
#loc3 = loc("jit(f)/jit(main)/encoder/sharding_constraint"(#loc1))
#loc4 = loc("jit(f)/jit(main)/encoder/dense_1/dot_general"(#loc1))
