// Megatron-style tensor-parallel transformer block (forward) on 8 GPUs of
// one node: hidden 4096, 32 heads of 128, FFN 16384, batch 2 x sequence
// 2048, bf16. Only the weights are annotated: Q/K/V and the first MLP
// weight are column-parallel (heads / FFN columns on "model"), the output
// projection and the second MLP weight row-parallel (their contracting dim
// on "model"). Propagation shards the attention and FFN activations on
// "model"; each row-parallel matmul leaves partial sums, so the explicit
// collectives are one all-reduce after the attention output projection and
// one after the second MLP matmul (Megatron's two all-reduces per block).
// expected collectives: all-reduce=2
sdy.mesh @mesh = <["model"=8]>

func.func @main(%x: tensor<2x2048x4096xbf16>,
                %wq: tensor<4096x32x128xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}, {}]>},
                %wk: tensor<4096x32x128xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}, {}]>},
                %wv: tensor<4096x32x128xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}, {}]>},
                %wo: tensor<32x128x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}, {}]>},
                %w1: tensor<4096x16384xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                %w2: tensor<16384x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>})
    -> tensor<2x2048x4096xbf16> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<bf16>
  // Attention: column-parallel Q, K, V (4 heads per GPU).
  %q = stablehlo.dot_general %x, %wq, contracting_dims = [2] x [0] : (tensor<2x2048x4096xbf16>, tensor<4096x32x128xbf16>) -> tensor<2x2048x32x128xbf16>
  %k = stablehlo.dot_general %x, %wk, contracting_dims = [2] x [0] : (tensor<2x2048x4096xbf16>, tensor<4096x32x128xbf16>) -> tensor<2x2048x32x128xbf16>
  %v = stablehlo.dot_general %x, %wv, contracting_dims = [2] x [0] : (tensor<2x2048x4096xbf16>, tensor<4096x32x128xbf16>) -> tensor<2x2048x32x128xbf16>
  %s = stablehlo.dot_general %q, %k, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] : (tensor<2x2048x32x128xbf16>, tensor<2x2048x32x128xbf16>) -> tensor<2x32x2048x2048xbf16>
  %e = stablehlo.exponential %s : tensor<2x32x2048x2048xbf16>
  %sum = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [3] : (tensor<2x32x2048x2048xbf16>, tensor<bf16>) -> tensor<2x32x2048xbf16>
  %sumb = stablehlo.broadcast_in_dim %sum, dims = [0, 1, 2] : (tensor<2x32x2048xbf16>) -> tensor<2x32x2048x2048xbf16>
  %p = stablehlo.divide %e, %sumb : tensor<2x32x2048x2048xbf16>
  %ctx = stablehlo.dot_general %p, %v, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1] : (tensor<2x32x2048x2048xbf16>, tensor<2x2048x32x128xbf16>) -> tensor<2x32x2048x128xbf16>
  // Row-parallel output projection: partial sums, all-reduced.
  %attn = stablehlo.dot_general %ctx, %wo, contracting_dims = [1, 3] x [0, 1] : (tensor<2x32x2048x128xbf16>, tensor<32x128x4096xbf16>) -> tensor<2x2048x4096xbf16>
  %r1 = stablehlo.add %x, %attn : tensor<2x2048x4096xbf16>
  // MLP: column-parallel up projection, row-parallel down projection.
  %h = stablehlo.dot_general %r1, %w1, contracting_dims = [2] x [0] : (tensor<2x2048x4096xbf16>, tensor<4096x16384xbf16>) -> tensor<2x2048x16384xbf16>
  %a = stablehlo.tanh %h : tensor<2x2048x16384xbf16>
  %y = stablehlo.dot_general %a, %w2, contracting_dims = [2] x [0] : (tensor<2x2048x16384xbf16>, tensor<16384x4096xbf16>) -> tensor<2x2048x4096xbf16>
  %out = stablehlo.add %r1, %y : tensor<2x2048x4096xbf16>
  return %out : tensor<2x2048x4096xbf16>
}
