#!/usr/bin/env python3
"""Self-tests of collective_count.py, the scheduler-independent count the
corpus runner checks every schedule against.

Run: python3 tests/corpus/test_collective_count.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collective_count import collective_counts  # noqa: E402

LOOP = """module {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = sdy.constant dense<START> : tensor<i32>
    %1 = sdy.constant dense<STEP> : tensor<i32>
    %2 = sdy.constant dense<BOUND> : tensor<i32>
    %3:2 = stablehlo.while(%iterArg = %0, %iterArg_0 = %arg0) : tensor<i32>, tensor<8xf32>ATTRS
     cond {
      %4 = stablehlo.compare  DIR, %iterArg, %2,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    } do {
      %4 = sdy.all_gather [{"x"}] %iterArg_0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
      %5 = stablehlo.add %iterArg, %1 : tensor<i32>
      stablehlo.return %5, %4 : tensor<i32>, tensor<8xf32>
    }
    return %3#1 : tensor<8xf32>
  }
}"""


def loop(start=0, step=1, bound=4, direction="LT", attrs=""):
    return (LOOP.replace("START", str(start)).replace("STEP", str(step))
            .replace("BOUND", str(bound)).replace("DIR", direction)
            .replace("ATTRS", attrs))


class CollectiveCountTest(unittest.TestCase):
    def test_loop_body_counts_trip_count_times(self):
        self.assertEqual(collective_counts(loop()), {"all-gather": 4})
        self.assertEqual(collective_counts(loop(bound=4, direction="LE")),
                         {"all-gather": 5})
        self.assertEqual(collective_counts(loop(start=1, step=2, bound=8)),
                         {"all-gather": 4})  # 1, 3, 5, 7
        self.assertEqual(collective_counts(loop(start=5, bound=2)), {})

    def test_uncounted_loop_runs_once_unless_xla_says(self):
        uncounted = loop().replace("%iterArg, %2,", "%iterArg, %arg9,")
        self.assertEqual(collective_counts(uncounted), {"all-gather": 1})
        known = uncounted.replace(
            "tensor<8xf32>\n     cond",
            'tensor<8xf32> attributes {backend_config = '
            '"{\\"known_trip_count\\":{\\"n\\":\\"6\\"}}"}\n     cond')
        self.assertEqual(collective_counts(known), {"all-gather": 6})

    def test_calls_count_their_callee_per_call_site(self):
        text = """module {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    %1 = call @f(%0) : (tensor<8xf32>) -> tensor<8xf32>
    %2 = sdy.all_reduce {"x"} %1 out_sharding=<@mesh, [{}]> : tensor<8xf32>
    return %2 : tensor<8xf32>
  }
  func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = sdy.all_gather [{"x"}] %arg0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}"""
        self.assertEqual(collective_counts(text),
                         {"all-gather": 2, "all-reduce": 1})

    def test_stablehlo_collectives_need_real_groups(self):
        text = """module {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = "stablehlo.all_reduce"(%arg0) <{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<8xf32>
    %1 = "stablehlo.all_reduce"(%0) <{replica_groups = dense<[[0], [1]]> : tensor<2x1xi64>}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8xf32>) -> tensor<8xf32>
    return %1 : tensor<8xf32>
  }
}"""
        self.assertEqual(collective_counts(text), {"all-reduce": 1})

    def test_unsettled_counts_are_none(self):
        self.assertIsNone(collective_counts(
            loop().replace("module {", 'module attributes {x = "mhlo.sharding"} {')))
        recursive = """module {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @main(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}"""
        self.assertIsNone(collective_counts(recursive))


if __name__ == "__main__":
    unittest.main()
