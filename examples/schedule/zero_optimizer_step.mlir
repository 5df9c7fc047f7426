// ZeRO-style sharded training step of a two-layer MLP on 8 GPUs of one
// node (data parallel, hidden 4096, FFN 16384, 8192 tokens, bf16 compute,
// f32 master weights and Adam moments). Master weights and both Adam
// moments are sharded over "data" (each GPU owns 1/8 of every row block).
// Before each use a weight is gathered whole (the sharding constraint to
// replicated: an all-gather of parameters); each weight gradient is a sum
// over the batch, which is sharded, so it is reduced straight into the
// owner's shard (a reduce-scatter of gradients, where plain data
// parallelism would all-reduce); Adam then updates only the local shard.
// expected collectives: all-gather=2 reduce-scatter=2
sdy.mesh @mesh = <["data"=8]>

func.func @main(%x: tensor<8192x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %dy: tensor<8192x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %p1: tensor<4096x16384xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %p2: tensor<16384x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %m1: tensor<4096x16384xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %v1: tensor<4096x16384xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %m2: tensor<16384x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %v2: tensor<16384x4096xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})
    -> (tensor<4096x16384xf32>, tensor<16384x4096xf32>, tensor<4096x16384xf32>,
        tensor<4096x16384xf32>, tensor<16384x4096xf32>, tensor<16384x4096xf32>) {
  // Parameters gathered for the forward and backward matmuls.
  %w1s = stablehlo.convert %p1 : (tensor<4096x16384xf32>) -> tensor<4096x16384xbf16>
  %w1 = sdy.sharding_constraint %w1s <@mesh, [{}, {}]> : tensor<4096x16384xbf16>
  %w2s = stablehlo.convert %p2 : (tensor<16384x4096xf32>) -> tensor<16384x4096xbf16>
  %w2 = sdy.sharding_constraint %w2s <@mesh, [{}, {}]> : tensor<16384x4096xbf16>
  // Forward and backward (batch-sharded activations).
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<8192x4096xbf16>, tensor<4096x16384xbf16>) -> tensor<8192x16384xbf16>
  %a = stablehlo.tanh %h : tensor<8192x16384xbf16>
  %dw2 = stablehlo.dot_general %a, %dy, contracting_dims = [0] x [0] : (tensor<8192x16384xbf16>, tensor<8192x4096xbf16>) -> tensor<16384x4096xbf16>
  %da = stablehlo.dot_general %dy, %w2, contracting_dims = [1] x [1] : (tensor<8192x4096xbf16>, tensor<16384x4096xbf16>) -> tensor<8192x16384xbf16>
  %dh = stablehlo.multiply %da, %a : tensor<8192x16384xbf16>
  %dw1 = stablehlo.dot_general %x, %dh, contracting_dims = [0] x [0] : (tensor<8192x4096xbf16>, tensor<8192x16384xbf16>) -> tensor<4096x16384xbf16>
  // Gradients reduced into the owner's shard.
  %g1b = sdy.sharding_constraint %dw1 <@mesh, [{"data"}, {}]> : tensor<4096x16384xbf16>
  %g2b = sdy.sharding_constraint %dw2 <@mesh, [{"data"}, {}]> : tensor<16384x4096xbf16>
  %g1 = stablehlo.convert %g1b : (tensor<4096x16384xbf16>) -> tensor<4096x16384xf32>
  %g2 = stablehlo.convert %g2b : (tensor<16384x4096xbf16>) -> tensor<16384x4096xf32>
  // Adam on the local shards (beta1 0.9, beta2 0.999, lr 1e-4, eps 1e-8).
  %b1 = stablehlo.constant dense<0.899999976> : tensor<4096x16384xf32>
  %c1 = stablehlo.constant dense<0.100000001> : tensor<4096x16384xf32>
  %b2 = stablehlo.constant dense<0.999000012> : tensor<4096x16384xf32>
  %c2 = stablehlo.constant dense<1.000000e-03> : tensor<4096x16384xf32>
  %lr = stablehlo.constant dense<9.99999974e-05> : tensor<4096x16384xf32>
  %eps = stablehlo.constant dense<9.99999993e-09> : tensor<4096x16384xf32>
  %m1a = stablehlo.multiply %m1, %b1 : tensor<4096x16384xf32>
  %m1b = stablehlo.multiply %g1, %c1 : tensor<4096x16384xf32>
  %m1n = stablehlo.add %m1a, %m1b : tensor<4096x16384xf32>
  %gg1 = stablehlo.multiply %g1, %g1 : tensor<4096x16384xf32>
  %v1a = stablehlo.multiply %v1, %b2 : tensor<4096x16384xf32>
  %v1b = stablehlo.multiply %gg1, %c2 : tensor<4096x16384xf32>
  %v1n = stablehlo.add %v1a, %v1b : tensor<4096x16384xf32>
  %r1 = stablehlo.sqrt %v1n : tensor<4096x16384xf32>
  %d1 = stablehlo.add %r1, %eps : tensor<4096x16384xf32>
  %u1 = stablehlo.divide %m1n, %d1 : tensor<4096x16384xf32>
  %s1 = stablehlo.multiply %u1, %lr : tensor<4096x16384xf32>
  %p1n = stablehlo.subtract %p1, %s1 : tensor<4096x16384xf32>
  %b1t = stablehlo.constant dense<0.899999976> : tensor<16384x4096xf32>
  %c1t = stablehlo.constant dense<0.100000001> : tensor<16384x4096xf32>
  %b2t = stablehlo.constant dense<0.999000012> : tensor<16384x4096xf32>
  %c2t = stablehlo.constant dense<1.000000e-03> : tensor<16384x4096xf32>
  %lrt = stablehlo.constant dense<9.99999974e-05> : tensor<16384x4096xf32>
  %epst = stablehlo.constant dense<9.99999993e-09> : tensor<16384x4096xf32>
  %m2a = stablehlo.multiply %m2, %b1t : tensor<16384x4096xf32>
  %m2b = stablehlo.multiply %g2, %c1t : tensor<16384x4096xf32>
  %m2n = stablehlo.add %m2a, %m2b : tensor<16384x4096xf32>
  %gg2 = stablehlo.multiply %g2, %g2 : tensor<16384x4096xf32>
  %v2a = stablehlo.multiply %v2, %b2t : tensor<16384x4096xf32>
  %v2b = stablehlo.multiply %gg2, %c2t : tensor<16384x4096xf32>
  %v2n = stablehlo.add %v2a, %v2b : tensor<16384x4096xf32>
  %r2 = stablehlo.sqrt %v2n : tensor<16384x4096xf32>
  %d2 = stablehlo.add %r2, %epst : tensor<16384x4096xf32>
  %u2 = stablehlo.divide %m2n, %d2 : tensor<16384x4096xf32>
  %s2 = stablehlo.multiply %u2, %lrt : tensor<16384x4096xf32>
  %p2n = stablehlo.subtract %p2, %s2 : tensor<16384x4096xf32>
  return %p1n, %p2n, %m1n, %v1n, %m2n, %v2n : tensor<4096x16384xf32>, tensor<16384x4096xf32>, tensor<4096x16384xf32>, tensor<4096x16384xf32>, tensor<16384x4096xf32>, tensor<16384x4096xf32>
}
