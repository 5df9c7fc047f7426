// Imitates: torch_xla SPMD (xs.mark_sharding with a 2x2 mesh) exported to StableHLO before
// partitioning: mhlo.sharding on arguments and a custom_call @Sharding, mhlo.num_partitions.
module @IrToHlo.57 attributes {mhlo.cross_program_prefetches = [], mhlo.is_dynamic = false, mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<128x64xf32> {mhlo.sharding = "{devices=[2,2]<=[4]}"}, %arg1: tensor<64x64xf32> {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"}) -> tensor<128x64xf32> {
    %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] : (tensor<128x64xf32>, tensor<64x64xf32>) -> tensor<128x64xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{devices=[2,1,2]<=[4] last_tile_dim_replicate}"} : (tensor<128x64xf32>) -> tensor<128x64xf32>
    return %1 : tensor<128x64xf32>
  }
}
