// Imitates: jax.jit(mlp).lower(x, w1, w2).as_text() with jax_use_shardy_partitioner=True
// (JAX 0.5): sdy.mesh, explicit argument shardings, jax.result_info, #loc aliases after the module.
module @jit_mlp_open attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<32x64xf32> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {?}]>} loc("x"), %arg1: tensor<64x128xf32> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{?}, {"y", ?}]>} loc("w1"), %arg2: tensor<128x64xf32> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}]>} loc("w2")) -> (tensor<32x64xf32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x64xf32>, tensor<64x128xf32>) -> tensor<32x128xf32> loc(#loc101)
    %1 = stablehlo.negate %0 : tensor<32x128xf32> loc(#loc102)
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<32x128xf32>, tensor<128x64xf32>) -> tensor<32x64xf32> loc(#loc103)
    return %2 : tensor<32x64xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc201 = loc("/home/user/model.py":12:5)
#loc202 = loc("/home/user/model.py":13:6)
#loc203 = loc("/home/user/model.py":14:7)
#loc101 = loc("jit(mlp_open)/jit(main)/dot_general"(#loc201))
#loc102 = loc("jit(mlp_open)/jit(main)/negate"(#loc202))
#loc103 = loc("jit(mlp_open)/jit(main)/dot_general"(#loc203))
