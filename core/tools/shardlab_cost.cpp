// shardlab-cost: estimates one collective or GEMM with the cost model and
// prints the estimate with its explanation (or, with --json, the JSON API's
// reply). See cost_cli.h and `shardlab-cost --help`.
#include "cost_cli.h"

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto command = shardlab::tools::parseCostArgs(args);
  if (!command) {
    std::cerr << "shardlab-cost: error: " << command.error().message << "\n";
    return 2;
  }
  return shardlab::tools::runCost(std::move(*command), std::cout, std::cerr);
}
