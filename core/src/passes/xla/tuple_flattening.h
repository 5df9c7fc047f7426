// Custom calls on tuples made into custom calls on the tuples' leaves, as
// XLA's imports do (Shardy shards values, not tuples): the operands built
// by stablehlo.tuple become their leaves, the tuple result becomes one
// result per leaf, and every get_tuple_element chain reading it is rewired
// to the leaf it ends at.
//
//   %t = stablehlo.tuple %a, %b
//   %r = custom_call @foo(%t) -> tuple<A, tuple<B, C>>
//   %x = get_tuple_element %r[1] ; %y = get_tuple_element %x[0]
// becomes
//   %r:3 = custom_call @foo(%a, %b) -> (A, B, C)     %y -> %r#1
#pragma once

#include "shardlab/ir/ir.h"

namespace shardlab {

/// Flattens `call` (one tuple-typed result). The original call, its dead
/// reads and the tuples only it used are erased once nothing reads them.
void flattenTupleCustomCall(Context &ctx, Operation &call);

} // namespace shardlab
