// Context parallelism as shardlab-opt -shardlab-context-ring writes it: one
// causal attention (cuDNN's fused call, forward and backward) over q, k, v
// [4, 1024, 8, 64] bf16 whose sequence is split over "context" (4 devices)
// and batch over "data" (2). Each call runs as a ring: 4 calls on 256-token
// chunks, keys and values passed on by collective_permute between them; the
// backward passes dK and dV on with them and home at the end
// (core/src/passes/strategy/context_ring.cpp, rules 1-5). Input: the two
// calls with q, k, v and dO sharded [{"data"}, {"context"}, {}, {}].
// expected collectives: collective-permute=20
module {
  sdy.mesh @mesh = <["data"=2, "context"=4]>
  func.func @main(%arg0: tensor<4x1024x8x64xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"context"}, {}, {}]>}, %arg1: tensor<4x1024x8x64xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"context"}, {}, {}]>}, %arg2: tensor<4x1024x8x64xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"context"}, {}, {}]>}, %arg3: tensor<4x1024x8x64xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"context"}, {}, {}]>}) -> (tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>) {
    %0:2 = sdy.manual_computation(%arg0, %arg1, %arg2) in_shardings=[<@mesh, [{?}, {"context"}, {?}, {?}]>, <@mesh, [{?}, {"context"}, {?}, {?}]>, <@mesh, [{?}, {"context"}, {?}, {?}]>] out_shardings=[<@mesh, [{?}, {"context"}, {?}, {?}]>, <@mesh, [{?}, {?}, {"context"}]>] manual_axes={"context"} (%arg4: tensor<4x256x8x64xbf16>, %arg5: tensor<4x256x8x64xbf16>, %arg6: tensor<4x256x8x64xbf16>) {
      %2:3 = stablehlo.custom_call @__cudnn$fmhaSoftmax(%arg4, %arg5, %arg6) {backend_config = "{\22cudnn_fmha_backend_config\22: {\22mask_type\22: \22CAUSAL\22}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l])->([i, j, k, l], [i, k, j], [o]) {i=4, j=256, k=8, l=64, m=256, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>) -> (tensor<4x256x8x64xbf16>, tensor<4x8x256xf32>, tensor<1xui8>)
      %3 = "stablehlo.collective_permute"(%arg5) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %4 = "stablehlo.collective_permute"(%arg6) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %5:3 = stablehlo.custom_call @__cudnn$fmhaSoftmax(%arg4, %3, %4) {backend_config = "{\22cudnn_fmha_backend_config\22: {\22mask_type\22: \22CAUSAL\22}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l])->([i, j, k, l], [i, k, j], [o]) {i=4, j=256, k=8, l=64, m=256, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>) -> (tensor<4x256x8x64xbf16>, tensor<4x8x256xf32>, tensor<1xui8>)
      %6 = stablehlo.maximum %2#1, %5#1 : tensor<4x8x256xf32>
      %7 = stablehlo.subtract %2#1, %6 : tensor<4x8x256xf32>
      %8 = stablehlo.exponential %7 : tensor<4x8x256xf32>
      %9 = stablehlo.subtract %5#1, %6 : tensor<4x8x256xf32>
      %10 = stablehlo.exponential %9 : tensor<4x8x256xf32>
      %11 = stablehlo.add %8, %10 : tensor<4x8x256xf32>
      %12 = stablehlo.divide %8, %11 : tensor<4x8x256xf32>
      %13 = stablehlo.convert %12 : (tensor<4x8x256xf32>) -> tensor<4x8x256xbf16>
      %14 = stablehlo.broadcast_in_dim %13, dims = [0, 2, 1] : (tensor<4x8x256xbf16>) -> tensor<4x256x8x64xbf16>
      %15 = stablehlo.multiply %2#0, %14 : tensor<4x256x8x64xbf16>
      %16 = stablehlo.divide %10, %11 : tensor<4x8x256xf32>
      %17 = stablehlo.convert %16 : (tensor<4x8x256xf32>) -> tensor<4x8x256xbf16>
      %18 = stablehlo.broadcast_in_dim %17, dims = [0, 2, 1] : (tensor<4x8x256xbf16>) -> tensor<4x256x8x64xbf16>
      %19 = stablehlo.multiply %5#0, %18 : tensor<4x256x8x64xbf16>
      %20 = stablehlo.add %15, %19 : tensor<4x256x8x64xbf16>
      %21 = stablehlo.log %11 : tensor<4x8x256xf32>
      %22 = stablehlo.add %6, %21 : tensor<4x8x256xf32>
      %23 = "stablehlo.collective_permute"(%3) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %24 = "stablehlo.collective_permute"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %25:3 = stablehlo.custom_call @__cudnn$fmhaSoftmax(%arg4, %23, %24) {backend_config = "{\22cudnn_fmha_backend_config\22: {\22mask_type\22: \22CAUSAL\22}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l])->([i, j, k, l], [i, k, j], [o]) {i=4, j=256, k=8, l=64, m=256, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>) -> (tensor<4x256x8x64xbf16>, tensor<4x8x256xf32>, tensor<1xui8>)
      %26 = stablehlo.maximum %22, %25#1 : tensor<4x8x256xf32>
      %27 = stablehlo.subtract %22, %26 : tensor<4x8x256xf32>
      %28 = stablehlo.exponential %27 : tensor<4x8x256xf32>
      %29 = stablehlo.subtract %25#1, %26 : tensor<4x8x256xf32>
      %30 = stablehlo.exponential %29 : tensor<4x8x256xf32>
      %31 = stablehlo.add %28, %30 : tensor<4x8x256xf32>
      %32 = stablehlo.divide %28, %31 : tensor<4x8x256xf32>
      %33 = stablehlo.convert %32 : (tensor<4x8x256xf32>) -> tensor<4x8x256xbf16>
      %34 = stablehlo.broadcast_in_dim %33, dims = [0, 2, 1] : (tensor<4x8x256xbf16>) -> tensor<4x256x8x64xbf16>
      %35 = stablehlo.multiply %20, %34 : tensor<4x256x8x64xbf16>
      %36 = stablehlo.divide %30, %31 : tensor<4x8x256xf32>
      %37 = stablehlo.convert %36 : (tensor<4x8x256xf32>) -> tensor<4x8x256xbf16>
      %38 = stablehlo.broadcast_in_dim %37, dims = [0, 2, 1] : (tensor<4x8x256xbf16>) -> tensor<4x256x8x64xbf16>
      %39 = stablehlo.multiply %25#0, %38 : tensor<4x256x8x64xbf16>
      %40 = stablehlo.add %35, %39 : tensor<4x256x8x64xbf16>
      %41 = stablehlo.log %31 : tensor<4x8x256xf32>
      %42 = stablehlo.add %26, %41 : tensor<4x8x256xf32>
      %43 = "stablehlo.collective_permute"(%23) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %44 = "stablehlo.collective_permute"(%24) <{channel_handle = #stablehlo.channel_handle<handle = 6, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %45:3 = stablehlo.custom_call @__cudnn$fmhaSoftmax(%arg4, %43, %44) {backend_config = "{\22cudnn_fmha_backend_config\22: {\22mask_type\22: \22CAUSAL\22}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l])->([i, j, k, l], [i, k, j], [o]) {i=4, j=256, k=8, l=64, m=256, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>) -> (tensor<4x256x8x64xbf16>, tensor<4x8x256xf32>, tensor<1xui8>)
      %46 = stablehlo.maximum %42, %45#1 : tensor<4x8x256xf32>
      %47 = stablehlo.subtract %42, %46 : tensor<4x8x256xf32>
      %48 = stablehlo.exponential %47 : tensor<4x8x256xf32>
      %49 = stablehlo.subtract %45#1, %46 : tensor<4x8x256xf32>
      %50 = stablehlo.exponential %49 : tensor<4x8x256xf32>
      %51 = stablehlo.add %48, %50 : tensor<4x8x256xf32>
      %52 = stablehlo.divide %48, %51 : tensor<4x8x256xf32>
      %53 = stablehlo.convert %52 : (tensor<4x8x256xf32>) -> tensor<4x8x256xbf16>
      %54 = stablehlo.broadcast_in_dim %53, dims = [0, 2, 1] : (tensor<4x8x256xbf16>) -> tensor<4x256x8x64xbf16>
      %55 = stablehlo.multiply %40, %54 : tensor<4x256x8x64xbf16>
      %56 = stablehlo.divide %50, %51 : tensor<4x8x256xf32>
      %57 = stablehlo.convert %56 : (tensor<4x8x256xf32>) -> tensor<4x8x256xbf16>
      %58 = stablehlo.broadcast_in_dim %57, dims = [0, 2, 1] : (tensor<4x8x256xbf16>) -> tensor<4x256x8x64xbf16>
      %59 = stablehlo.multiply %45#0, %58 : tensor<4x256x8x64xbf16>
      %60 = stablehlo.add %55, %59 : tensor<4x256x8x64xbf16>
      %61 = stablehlo.log %51 : tensor<4x8x256xf32>
      %62 = stablehlo.add %46, %61 : tensor<4x8x256xf32>
      sdy.return %60, %62 : tensor<4x256x8x64xbf16>, tensor<4x8x256xf32>
    } : (tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>) -> (tensor<4x1024x8x64xbf16>, tensor<4x8x1024xf32>)
    %1:3 = sdy.manual_computation(%arg0, %arg1, %arg2, %0#1, %arg3, %0#0) in_shardings=[<@mesh, [{?}, {"context"}, {?}, {?}]>, <@mesh, [{?}, {"context"}, {?}, {?}]>, <@mesh, [{?}, {"context"}, {?}, {?}]>, <@mesh, [{?}, {?}, {"context"}]>, <@mesh, [{?}, {"context"}, {?}, {?}]>, <@mesh, [{?}, {"context"}, {?}, {?}]>] out_shardings=[<@mesh, [{?}, {"context"}, {?}, {?}]>, <@mesh, [{?}, {"context"}, {?}, {?}]>, <@mesh, [{?}, {"context"}, {?}, {?}]>] manual_axes={"context"} (%arg4: tensor<4x256x8x64xbf16>, %arg5: tensor<4x256x8x64xbf16>, %arg6: tensor<4x256x8x64xbf16>, %arg7: tensor<4x8x256xf32>, %arg8: tensor<4x256x8x64xbf16>, %arg9: tensor<4x256x8x64xbf16>) {
      %2:4 = stablehlo.custom_call @__cudnn$fmhaSoftmaxBackward(%arg4, %arg5, %arg6, %arg7, %arg8, %arg9) {backend_config = "{\22cudnn_fmha_backend_config\22: {\22mask_type\22: \22CAUSAL\22}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l], [i, k, j], [i, j, k, l], [i, j, k, l])->([i, j, k, l], [i, m, n, l], [i, m, n, l], [o]) {i=4, j=256, k=8, l=64, m=256, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x8x256xf32>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>) -> (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<1xui8>)
      %3 = "stablehlo.collective_permute"(%arg5) <{channel_handle = #stablehlo.channel_handle<handle = 7, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %4 = "stablehlo.collective_permute"(%arg6) <{channel_handle = #stablehlo.channel_handle<handle = 8, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %5 = "stablehlo.collective_permute"(%2#1) <{channel_handle = #stablehlo.channel_handle<handle = 9, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %6 = "stablehlo.collective_permute"(%2#2) <{channel_handle = #stablehlo.channel_handle<handle = 10, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %7:4 = stablehlo.custom_call @__cudnn$fmhaSoftmaxBackward(%arg4, %3, %4, %arg7, %arg8, %arg9) {backend_config = "{\22cudnn_fmha_backend_config\22: {\22mask_type\22: \22CAUSAL\22}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l], [i, k, j], [i, j, k, l], [i, j, k, l])->([i, j, k, l], [i, m, n, l], [i, m, n, l], [o]) {i=4, j=256, k=8, l=64, m=256, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x8x256xf32>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>) -> (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<1xui8>)
      %8 = stablehlo.add %2#0, %7#0 : tensor<4x256x8x64xbf16>
      %9 = stablehlo.add %5, %7#1 : tensor<4x256x8x64xbf16>
      %10 = stablehlo.add %6, %7#2 : tensor<4x256x8x64xbf16>
      %11 = "stablehlo.collective_permute"(%3) <{channel_handle = #stablehlo.channel_handle<handle = 11, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %12 = "stablehlo.collective_permute"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 12, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %13 = "stablehlo.collective_permute"(%9) <{channel_handle = #stablehlo.channel_handle<handle = 13, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %14 = "stablehlo.collective_permute"(%10) <{channel_handle = #stablehlo.channel_handle<handle = 14, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %15:4 = stablehlo.custom_call @__cudnn$fmhaSoftmaxBackward(%arg4, %11, %12, %arg7, %arg8, %arg9) {backend_config = "{\22cudnn_fmha_backend_config\22: {\22mask_type\22: \22CAUSAL\22}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l], [i, k, j], [i, j, k, l], [i, j, k, l])->([i, j, k, l], [i, m, n, l], [i, m, n, l], [o]) {i=4, j=256, k=8, l=64, m=256, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x8x256xf32>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>) -> (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<1xui8>)
      %16 = stablehlo.add %8, %15#0 : tensor<4x256x8x64xbf16>
      %17 = stablehlo.add %13, %15#1 : tensor<4x256x8x64xbf16>
      %18 = stablehlo.add %14, %15#2 : tensor<4x256x8x64xbf16>
      %19 = "stablehlo.collective_permute"(%11) <{channel_handle = #stablehlo.channel_handle<handle = 15, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %20 = "stablehlo.collective_permute"(%12) <{channel_handle = #stablehlo.channel_handle<handle = 16, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %21 = "stablehlo.collective_permute"(%17) <{channel_handle = #stablehlo.channel_handle<handle = 17, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %22 = "stablehlo.collective_permute"(%18) <{channel_handle = #stablehlo.channel_handle<handle = 18, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %23:4 = stablehlo.custom_call @__cudnn$fmhaSoftmaxBackward(%arg4, %19, %20, %arg7, %arg8, %arg9) {backend_config = "{\22cudnn_fmha_backend_config\22: {\22mask_type\22: \22CAUSAL\22}}", sdy.sharding_rule = #sdy.op_sharding_rule<([i, j, k, l], [i, m, n, l], [i, m, n, l], [i, k, j], [i, j, k, l], [i, j, k, l])->([i, j, k, l], [i, m, n, l], [i, m, n, l], [o]) {i=4, j=256, k=8, l=64, m=256, n=8, o=1} need_replication={j, l, m}, custom>} : (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x8x256xf32>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>) -> (tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<1xui8>)
      %24 = stablehlo.add %16, %23#0 : tensor<4x256x8x64xbf16>
      %25 = stablehlo.add %21, %23#1 : tensor<4x256x8x64xbf16>
      %26 = stablehlo.add %22, %23#2 : tensor<4x256x8x64xbf16>
      %27 = "stablehlo.collective_permute"(%25) <{channel_handle = #stablehlo.channel_handle<handle = 19, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      %28 = "stablehlo.collective_permute"(%26) <{channel_handle = #stablehlo.channel_handle<handle = 20, type = 1>, source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0], [4, 5], [5, 6], [6, 7], [7, 4]]> : tensor<8x2xi64>}> : (tensor<4x256x8x64xbf16>) -> tensor<4x256x8x64xbf16>
      sdy.return %24, %27, %28 : tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>, tensor<4x256x8x64xbf16>
    } : (tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>, tensor<4x8x1024xf32>, tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>) -> (tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>)
    return %0#0, %1#0, %1#1, %1#2 : tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>, tensor<4x1024x8x64xbf16>
  }
}

