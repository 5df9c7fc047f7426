// A dense layer (matmul plus bias) on a 2x2 mesh: the batch is sharded on "x",
// the weight on "y". `bash scripts/run.sh` opens it in the playground.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}, %arg2: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %1 = stablehlo.add %0, %arg2 : tensor<8x32xf32>
  return %1 : tensor<8x32xf32>
}
