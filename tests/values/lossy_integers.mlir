// The module of issue 40: 64-bit integers that a parser reading them
// through a double changes (2^53 + 1, INT64_MAX, ui64 at or above 2^63).
func.func @main() -> (tensor<i64>, tensor<3xi64>, tensor<2xui64>) {
  %0 = stablehlo.constant dense<9223372036854775807> : tensor<i64>
  %1 = stablehlo.constant dense<[9007199254740993, -9223372036854775808, 123456789012345678]> : tensor<3xi64>
  %2 = stablehlo.constant dense<[18446744073709551615, 9223372036854775807]> : tensor<2xui64>
  return %0, %1, %2 : tensor<i64>, tensor<3xi64>, tensor<2xui64>
}
