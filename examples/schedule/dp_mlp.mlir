// Data-parallel MLP step on 16 GPUs (2 nodes of 8): the batch is sharded
// over "data", the weights are replicated. Propagation shards the
// activations and their gradients on the batch; each weight gradient
// contracts over the batch, so lowering to explicit collectives all-reduces
// it across all devices (crossing nodes: S-curve model). The scheduler
// overlaps the first gradient's all-reduce with the remaining backward
// GEMMs.
// expected collectives: all-reduce=2
sdy.mesh @mesh = <["data"=16]>

func.func @main(%x: tensor<4096x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %w1: tensor<4096x16384xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                %w2: tensor<16384x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                %dy: tensor<4096x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})
    -> (tensor<4096x16384xbf16>, tensor<16384x4096xbf16>) {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<4096x4096xbf16>, tensor<4096x16384xbf16>) -> tensor<4096x16384xbf16>
  %a = stablehlo.tanh %h : tensor<4096x16384xbf16>
  %dw2 = stablehlo.dot_general %a, %dy, contracting_dims = [0] x [0] : (tensor<4096x16384xbf16>, tensor<4096x4096xbf16>) -> tensor<16384x4096xbf16>
  %da = stablehlo.dot_general %dy, %w2, contracting_dims = [1] x [1] : (tensor<4096x4096xbf16>, tensor<16384x4096xbf16>) -> tensor<4096x16384xbf16>
  %dh = stablehlo.multiply %da, %a : tensor<4096x16384xbf16>
  %dw1 = stablehlo.dot_general %x, %dh, contracting_dims = [0] x [0] : (tensor<4096x4096xbf16>, tensor<4096x16384xbf16>) -> tensor<4096x16384xbf16>
  return %dw1, %dw2 : tensor<4096x16384xbf16>, tensor<16384x4096xbf16>
}
