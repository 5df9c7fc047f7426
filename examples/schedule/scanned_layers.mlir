// A scanned stack of 8 MLP layers, FSDP-style, on 8 GPUs (one node), as
// jax.lax.scan over stacked weights lowers: a stablehlo.while counted by
// constant bounds whose body slices layer i's weights with dynamic_slice.
// The batch and the weights are both sharded over "data"; each layer's two
// weight matrices are all-gathered before their GEMMs. The loop's trip count
// (8, from the bounds) is in the report; the schedule runs the body 8 times,
// one after another as XLA schedules a loop body, so the all-gathers count
// 8 times each. Within a layer the down-projection's all-gather overlaps the
// up-projection's GEMM. The playground's Gantt draws one iteration, "×8".
// expected collectives: all-gather=16
sdy.mesh @mesh = <["data"=8]>

func.func @main(%x: tensor<8192x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                %w_up: tensor<8x4096x16384xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}, {}]>},
                %w_down: tensor<8x16384x4096xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"data"}, {}]>})
    -> tensor<8192x4096xbf16> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %layers = stablehlo.constant dense<8> : tensor<i32>
  %out:2 = stablehlo.while(%i = %zero, %h = %x) : tensor<i32>, tensor<8192x4096xbf16>
   cond {
    %more = stablehlo.compare LT, %i, %layers, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %more : tensor<i1>
  } do {
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %up_slice = stablehlo.dynamic_slice %w_up, %i, %c0, %c0, sizes = [1, 4096, 16384] : (tensor<8x4096x16384xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4096x16384xbf16>
    %up = stablehlo.reshape %up_slice : (tensor<1x4096x16384xbf16>) -> tensor<4096x16384xbf16>
    %down_slice = stablehlo.dynamic_slice %w_down, %i, %c0, %c0, sizes = [1, 16384, 4096] : (tensor<8x16384x4096xbf16>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x16384x4096xbf16>
    %down = stablehlo.reshape %down_slice : (tensor<1x16384x4096xbf16>) -> tensor<16384x4096xbf16>
    %a = stablehlo.dot_general %h, %up, contracting_dims = [1] x [0] : (tensor<8192x4096xbf16>, tensor<4096x16384xbf16>) -> tensor<8192x16384xbf16>
    %g = stablehlo.tanh %a : tensor<8192x16384xbf16>
    %y = stablehlo.dot_general %g, %down, contracting_dims = [1] x [0] : (tensor<8192x16384xbf16>, tensor<16384x4096xbf16>) -> tensor<8192x4096xbf16>
    %next = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %next, %y : tensor<i32>, tensor<8192x4096xbf16>
  }
  return %out#1 : tensor<8192x4096xbf16>
}
