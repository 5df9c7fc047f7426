// A reduction over a sharded dimension leaves a partial result on each
// device; "with explicit collectives" inserts the all-reduce. The
// broadcast then brings the row sums back to the full shape.
sdy.mesh @mesh = <["x"=4]>

func.func @main(%arg0: tensor<128x256xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) -> tensor<128x256xf32> {
  %zero = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %sum = stablehlo.reduce(%arg0 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<128x256xf32>, tensor<f32>) -> tensor<128xf32>
  %b = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<128xf32>) -> tensor<128x256xf32>
  %d = stablehlo.divide %arg0, %b : tensor<128x256xf32>
  return %d : tensor<128x256xf32>
}
