// User priorities: a dimension sharding with a lower pN wins first. Both
// operands of the add want dimension 0 sharded; %a's "x" has priority p0,
// %b's "y" only p1, so with user-priority propagation (or the pipeline)
// the result takes "x" on dimension 0. Open dimensions ({?}) may still be
// sharded further by propagation; closed ones ({}) may not.
sdy.mesh @mesh = <["x"=2, "y"=2]>

func.func @main(%a: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}p0, {?}]>},
                %b: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}p1, {?}]>}) -> tensor<16x16xf32> {
  %0 = stablehlo.add %a, %b : tensor<16x16xf32>
  %1 = stablehlo.negate %0 : tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
}
