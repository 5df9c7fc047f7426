// Sub-axes: a reshape that splits a sharded dimension splits its axis too.
// 32 rows on "x"=4 become 2x16: the major half of "x" ("x":(1)2) shards the
// new dimension 0 and the minor half ("x":(2)2) dimension 1. Put the cursor
// on %r and open the Devices view to see which block each device holds, or
// on the reshape line for its factor table.
sdy.mesh @mesh = <["x"=4, "y"=2]>

func.func @main(%arg0: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<2x16x16xf32> {
  %r = stablehlo.reshape %arg0 : (tensor<32x16xf32>) -> tensor<2x16x16xf32>
  %e = stablehlo.exponential %r : tensor<2x16x16xf32>
  return %e : tensor<2x16x16xf32>
}
