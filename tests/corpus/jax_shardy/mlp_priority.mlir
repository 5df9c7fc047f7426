// Imitates: jax.jit(mlp).lower(x, w1, w2).as_text() with jax_use_shardy_partitioner=True
// (JAX 0.5): sdy.mesh, explicit argument shardings, jax.result_info, #loc aliases after the module.
module @jit_mlp_priority attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["a"=4, "b"=2]>
  func.func public @main(%arg0: tensor<64x128xf16> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"a"}p0, {}]>} loc("x"), %arg1: tensor<128x512xf16> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}p1]>} loc("w1"), %arg2: tensor<512x128xf16> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>} loc("w2")) -> (tensor<64x128xf16> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x128xf16>, tensor<128x512xf16>) -> tensor<64x512xf16> loc(#loc101)
    %1 = stablehlo.tanh %0 : tensor<64x512xf16> loc(#loc102)
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x512xf16>, tensor<512x128xf16>) -> tensor<64x128xf16> loc(#loc103)
    return %2 : tensor<64x128xf16> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc201 = loc("/home/user/model.py":12:5)
#loc202 = loc("/home/user/model.py":13:6)
#loc203 = loc("/home/user/model.py":14:7)
#loc101 = loc("jit(mlp_priority)/jit(main)/dot_general"(#loc201))
#loc102 = loc("jit(mlp_priority)/jit(main)/tanh"(#loc202))
#loc103 = loc("jit(mlp_priority)/jit(main)/dot_general"(#loc203))
