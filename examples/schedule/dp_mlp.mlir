// Data-parallel MLP step on 16 GPUs (2 nodes of 8): the batch is sharded
// over "data"; the two weight gradients are all-reduced across all devices
// (crossing nodes: S-curve model), overlapping the remaining backward GEMMs.
sdy.mesh @mesh = <["data"=16]>

func.func @main(%x: tensor<4096x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %w1: tensor<4096x16384xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                %w2: tensor<16384x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                %dy: tensor<4096x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})
    -> (tensor<4096x16384xbf16>, tensor<16384x4096xbf16>) {
  %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<4096x4096xbf16>, tensor<4096x16384xbf16>) -> tensor<4096x16384xbf16>
  %a = stablehlo.tanh %h {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<4096x16384xbf16>
  %dw2 = stablehlo.dot_general %a, %dy, contracting_dims = [0] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"data"}>]>} : (tensor<4096x16384xbf16>, tensor<4096x4096xbf16>) -> tensor<16384x4096xbf16>
  %g2 = sdy.all_reduce {"data"} %dw2 out_sharding=<@mesh, [{}, {}]> : tensor<16384x4096xbf16>
  %da = stablehlo.dot_general %dy, %w2, contracting_dims = [1] x [1] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : (tensor<4096x4096xbf16>, tensor<16384x4096xbf16>) -> tensor<4096x16384xbf16>
  %dh = stablehlo.multiply %da, %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"data"}, {}]>]>} : tensor<4096x16384xbf16>
  %dw1 = stablehlo.dot_general %x, %dh, contracting_dims = [0] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}], unreduced={"data"}>]>} : (tensor<4096x4096xbf16>, tensor<4096x16384xbf16>) -> tensor<4096x16384xbf16>
  %g1 = sdy.all_reduce {"data"} %dw1 out_sharding=<@mesh, [{}, {}]> : tensor<4096x16384xbf16>
  return %g1, %g2 : tensor<4096x16384xbf16>, tensor<16384x4096xbf16>
}
