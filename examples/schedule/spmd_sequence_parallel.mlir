// A per-device program as XLA's SPMD partitioner leaves it: StableHLO
// collectives written out with replica groups, local shapes, no shardings.
// 16 GPUs on 2 nodes: Megatron tensor + sequence parallelism over the 8
// GPUs of a node (groups [0..7] and [8..15]) and data parallelism across
// the nodes (groups {0,8}, {1,9}, ...). One MLP layer, forward and
// backward, bf16, hidden 4096, FFN 16384, batch 2 x sequence 2048:
//  - the sequence-sharded input is all-gathered inside the node before the
//    column-parallel matmul and the row-parallel output is reduce-scattered
//    back onto the sequence (Megatron-SP's all-gather / reduce-scatter pair);
//  - the backward pass does the same for the output gradient and the input
//    gradient;
//  - the weight gradients are all-reduced across nodes (S-curve model).
// The scheduler derives groups, bytes and communication types from the
// replica_groups attributes. Neither reduce-scatter depends on the other
// (this is one layer, cut short), so they run as one call of 8 MiB, as
// XLA's reduce-scatter combiner merges them; the all-gathers (32 MiB each)
// and the all-reduces (16 MiB each) are above its 30 MiB threshold.
// expected collectives: all-gather=2 all-reduce=2 reduce-scatter=1
func.func @main(%x: tensor<2x256x4096xbf16>, %dy: tensor<2x256x4096xbf16>,
                %w1: tensor<4096x2048xbf16>, %w2: tensor<2048x4096xbf16>)
    -> (tensor<2x256x4096xbf16>, tensor<4096x2048xbf16>, tensor<2048x4096xbf16>) {
  // Forward.
  %xf = "stablehlo.all_gather"(%x) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<2x8xi64>, use_global_device_ids}> : (tensor<2x256x4096xbf16>) -> tensor<2x2048x4096xbf16>
  %h = stablehlo.dot_general %xf, %w1, contracting_dims = [2] x [0] : (tensor<2x2048x4096xbf16>, tensor<4096x2048xbf16>) -> tensor<2x2048x2048xbf16>
  %a = stablehlo.tanh %h : tensor<2x2048x2048xbf16>
  %yp = stablehlo.dot_general %a, %w2, contracting_dims = [2] x [0] : (tensor<2x2048x2048xbf16>, tensor<2048x4096xbf16>) -> tensor<2x2048x4096xbf16>
  %y = "stablehlo.reduce_scatter"(%yp) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<2x8xi64>, scatter_dimension = 1 : i64, use_global_device_ids}> ({
  ^bb0(%l: tensor<bf16>, %r: tensor<bf16>):
    %s = stablehlo.add %l, %r : tensor<bf16>
    stablehlo.return %s : tensor<bf16>
  }) : (tensor<2x2048x4096xbf16>) -> tensor<2x256x4096xbf16>
  // Backward.
  %dyf = "stablehlo.all_gather"(%dy) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<2x8xi64>, use_global_device_ids}> : (tensor<2x256x4096xbf16>) -> tensor<2x2048x4096xbf16>
  %dw2p = stablehlo.dot_general %a, %dyf, contracting_dims = [0, 1] x [0, 1] : (tensor<2x2048x2048xbf16>, tensor<2x2048x4096xbf16>) -> tensor<2048x4096xbf16>
  %da = stablehlo.dot_general %dyf, %w2, contracting_dims = [2] x [1] : (tensor<2x2048x4096xbf16>, tensor<2048x4096xbf16>) -> tensor<2x2048x2048xbf16>
  %dh = stablehlo.multiply %da, %a : tensor<2x2048x2048xbf16>
  %dw1p = stablehlo.dot_general %xf, %dh, contracting_dims = [0, 1] x [0, 1] : (tensor<2x2048x4096xbf16>, tensor<2x2048x2048xbf16>) -> tensor<4096x2048xbf16>
  %dxp = stablehlo.dot_general %dh, %w1, contracting_dims = [2] x [1] : (tensor<2x2048x2048xbf16>, tensor<4096x2048xbf16>) -> tensor<2x2048x4096xbf16>
  %dx = "stablehlo.reduce_scatter"(%dxp) <{channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<2x8xi64>, scatter_dimension = 1 : i64, use_global_device_ids}> ({
  ^bb0(%l: tensor<bf16>, %r: tensor<bf16>):
    %s = stablehlo.add %l, %r : tensor<bf16>
    stablehlo.return %s : tensor<bf16>
  }) : (tensor<2x2048x4096xbf16>) -> tensor<2x256x4096xbf16>
  // Data-parallel gradient all-reduce across the two nodes.
  %dw2 = "stablehlo.all_reduce"(%dw2p) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>, replica_groups = dense<[[0, 8], [1, 9], [2, 10], [3, 11], [4, 12], [5, 13], [6, 14], [7, 15]]> : tensor<8x2xi64>, use_global_device_ids}> ({
  ^bb0(%l: tensor<bf16>, %r: tensor<bf16>):
    %s = stablehlo.add %l, %r : tensor<bf16>
    stablehlo.return %s : tensor<bf16>
  }) : (tensor<2048x4096xbf16>) -> tensor<2048x4096xbf16>
  %dw1 = "stablehlo.all_reduce"(%dw1p) <{channel_handle = #stablehlo.channel_handle<handle = 6, type = 1>, replica_groups = dense<[[0, 8], [1, 9], [2, 10], [3, 11], [4, 12], [5, 13], [6, 14], [7, 15]]> : tensor<8x2xi64>, use_global_device_ids}> ({
  ^bb0(%l: tensor<bf16>, %r: tensor<bf16>):
    %s = stablehlo.add %l, %r : tensor<bf16>
    stablehlo.return %s : tensor<bf16>
  }) : (tensor<4096x2048xbf16>) -> tensor<4096x2048xbf16>
  return %dx, %dw1, %dw2 : tensor<2x256x4096xbf16>, tensor<4096x2048xbf16>, tensor<2048x4096xbf16>
}
