// Imitates: a module printed with --mlir-print-debuginfo: locations on every op, argument and
// result, file:line:col ranges, name locations and loc(unknown).
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2]> loc(#loc)
  func.func public @main(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>} loc("x"), %arg1: tensor<8x16xf32> loc(unknown)) -> (tensor<8x16xf32> {jax.result_info = ""}) {
    %0 = stablehlo.add %arg0, %arg1 : tensor<8x16xf32> loc(#loc2)
    %1 = stablehlo.multiply %0, %0 : tensor<8x16xf32> loc("/tmp/f.py":11:3 to 12:9)
    return %1 : tensor<8x16xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("/tmp/f.py":10:5 to :17)
#loc2 = loc("jit(f)/add"(#loc1))
