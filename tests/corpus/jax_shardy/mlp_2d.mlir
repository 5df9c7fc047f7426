// Imitates: jax.jit(mlp).lower(x, w1, w2).as_text() with jax_use_shardy_partitioner=True
// (JAX 0.5): sdy.mesh, explicit argument shardings, jax.result_info, #loc aliases after the module.
module @jit_mlp_2d attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func public @main(%arg0: tensor<64x256xbf16> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>} loc("x"), %arg1: tensor<256x1024xbf16> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>} loc("w1"), %arg2: tensor<1024x256xbf16> {mhlo.layout_mode = "default", sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>} loc("w2")) -> (tensor<64x256xbf16> {jax.result_info = "", mhlo.layout_mode = "default"}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x256xbf16>, tensor<256x1024xbf16>) -> tensor<64x1024xbf16> loc(#loc101)
    %1 = stablehlo.tanh %0 : tensor<64x1024xbf16> loc(#loc102)
    %2 = stablehlo.dot_general %1, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<64x1024xbf16>, tensor<1024x256xbf16>) -> tensor<64x256xbf16> loc(#loc103)
    return %2 : tensor<64x256xbf16> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc201 = loc("/home/user/model.py":12:5)
#loc202 = loc("/home/user/model.py":13:6)
#loc203 = loc("/home/user/model.py":14:7)
#loc101 = loc("jit(mlp_2d)/jit(main)/dot_general"(#loc201))
#loc102 = loc("jit(mlp_2d)/jit(main)/tanh"(#loc202))
#loc103 = loc("jit(mlp_2d)/jit(main)/dot_general"(#loc203))
