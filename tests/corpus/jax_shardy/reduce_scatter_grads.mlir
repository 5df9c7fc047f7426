// Imitates: a jax.jit gradient step of data parallelism with Shardy, output sharded on the
// reduced dim so export inserts a reduce-scatter; mhlo.frontend_attributes on an op.
module @jit_grad attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=8]>
  func.func public @main(%arg0: tensor<256x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<256x512xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<512x512xf32> {jax.result_info = "", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [0] x [0] {mhlo.frontend_attributes = {_xla_stream_annotation = "1"}} : (tensor<256x512xf32>, tensor<256x512xf32>) -> tensor<512x512xf32>
    return %0 : tensor<512x512xf32>
  }
}
