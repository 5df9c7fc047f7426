// Megatron-style tensor parallelism on 8 devices: the batch on "data", the
// hidden dimension of both weights on "model". Propagation shards the
// hidden activations on "model"; the second matmul contracts over "model",
// so "with explicit collectives" shows the all-reduce it needs.
sdy.mesh @mesh = <["data"=2, "model"=4]>

func.func @main(%x: tensor<64x512xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %w1: tensor<512x2048xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                %w2: tensor<2048x512xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}) -> tensor<64x512xbf16> {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<64x512xbf16>, tensor<512x2048xbf16>) -> tensor<64x2048xbf16>
  %a = stablehlo.tanh %h : tensor<64x2048xbf16>
  %y = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<64x2048xbf16>, tensor<2048x512xbf16>) -> tensor<64x512xbf16>
  return %y : tensor<64x512xbf16>
}
