// A mixture-of-experts layer in GShard's form on 4 devices: tokens in 4
// groups of 8, a router matmul, dispatch to 4 experts of capacity 2, the
// experts' two matmuls (batched over the expert dimension), the combine.
// As written it is expert-parallel: the groups and the experts are split
// over "expert", so the dispatched tokens reach their experts' devices by
// all-to-all and come back the same way.
//   shardlab-schedule examples/moe_layer.mlir --compare   (EP beside DP, TP, ...)
//   shardlab-run --shardings module examples/moe_layer.mlir
sdy.mesh @mesh = <["expert"=4]>

func.func @main(%x: tensor<4x8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}]>},
                %dispatch: tensor<4x8x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}, {}]>},
                %wr: tensor<16x4xf32>,
                %w1: tensor<4x16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}]>},
                %w2: tensor<4x32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"expert"}, {}, {}]>})
    -> (tensor<4x8x16xf32>, tensor<4x8x4xf32>) {
  %logits = stablehlo.dot_general %x, %wr, contracting_dims = [2] x [0] : (tensor<4x8x16xf32>, tensor<16x4xf32>) -> tensor<4x8x4xf32>
  %xe = stablehlo.dot_general %dispatch, %x, batching_dims = [0] x [0], contracting_dims = [1] x [1] : (tensor<4x8x4x2xf32>, tensor<4x8x16xf32>) -> tensor<4x4x2x16xf32>
  %h = stablehlo.dot_general %xe, %w1, batching_dims = [1] x [0], contracting_dims = [3] x [1] : (tensor<4x4x2x16xf32>, tensor<4x16x32xf32>) -> tensor<4x4x2x32xf32>
  %a = stablehlo.tanh %h : tensor<4x4x2x32xf32>
  %y = stablehlo.dot_general %a, %w2, batching_dims = [0] x [0], contracting_dims = [3] x [1] : (tensor<4x4x2x32xf32>, tensor<4x32x16xf32>) -> tensor<4x4x2x16xf32>
  %out = stablehlo.dot_general %dispatch, %y, batching_dims = [0] x [1], contracting_dims = [2, 3] x [0, 2] : (tensor<4x8x4x2xf32>, tensor<4x4x2x16xf32>) -> tensor<4x8x16xf32>
  return %out, %logits : tensor<4x8x16xf32>, tensor<4x8x4xf32>
}
