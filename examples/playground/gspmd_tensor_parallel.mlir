// A tensor-parallel MLP as JAX exported it before Shardy (GSPMD form):
// no sdy.mesh, only mhlo.sharding strings. The playground recognises the
// form, imports the strings into a mesh of 4 devices and sdy.sharding
// attributes (-xla-sdy-stablehlo-import-pipeline), then propagates: the
// hidden activation is sharded on its columns, and the second matmul's
// partial sums are all-reduced (see the Schedule tab).
module @jit_mlp attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<256x1024xbf16> {mhlo.sharding = "{replicated}"},
                         %w1: tensor<1024x4096xbf16> {mhlo.sharding = "{devices=[1,4]<=[4]}"},
                         %w2: tensor<4096x1024xbf16> {mhlo.sharding = "{devices=[4,1]<=[4]}"})
      -> (tensor<256x1024xbf16> {jax.result_info = "", mhlo.sharding = "{replicated}"}) {
    %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<256x1024xbf16>, tensor<1024x4096xbf16>) -> tensor<256x4096xbf16>
    %a = stablehlo.tanh %h : tensor<256x4096xbf16>
    %y = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<256x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<256x1024xbf16>
    return %y : tensor<256x1024xbf16>
  }
}
