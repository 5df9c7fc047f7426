// usersOf: each op that uses a value, once, in the order of the value's use
// list, whether the value has a few users or many.
#include "passes/pass_utils.h"
#include "shardlab/ir/ir.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

using namespace shardlab;

namespace {

// `count` ops in `block`, each using `value` `uses_each` times.
std::vector<Operation *> addUsers(Context &ctx, Block &block, Value *value,
                                  int count, int uses_each) {
  std::vector<Operation *> users;
  for (int i = 0; i < count; ++i) {
    Operation *user =
        block.push_back(Operation::create(ctx.ops, "test.user", nullptr, {}));
    user->setOperands(std::vector<Value *>(size_t(uses_each), value));
    users.push_back(user);
  }
  return users;
}

} // namespace

TEST_CASE("usersOf lists each user once, few users or many") {
  for (int count : {0, 1, 15, 16, 17, 40, 1000})
    for (int uses_each : {1, 3}) {
      CAPTURE(count);
      CAPTURE(uses_each);
      auto ctx = std::make_shared<Context>();
      Module module(ctx);
      Type f32 = ctx->types.element("f32");
      Value *value = module.body().addArgument(f32, {});
      std::vector<Operation *> users =
          addUsers(*ctx, module.body(), value, count, uses_each);
      std::vector<Operation *> found = usersOf(value);
      REQUIRE(found.size() == users.size());
      // The use list is newest first; usersOf keeps its order.
      std::vector<Operation *> expected(users.rbegin(), users.rend());
      CHECK(found == expected);
    }
}

TEST_CASE("replaceAllUsesExcept moves every use but the excepted op's") {
  auto ctx = std::make_shared<Context>();
  Module module(ctx);
  Type f32 = ctx->types.element("f32");
  Value *value = module.body().addArgument(f32, {});
  std::vector<Operation *> users = addUsers(*ctx, module.body(), value, 3, 2);
  Operation *after = users[1]; // reads `value` twice and stands for it
  after->setResultTypes({f32});
  Value *replacement = after->result(0);
  value->replaceAllUsesExcept(replacement, after);
  CHECK(usersOf(value) == std::vector<Operation *>{after});
  std::vector<Operation *> moved = usersOf(replacement);
  std::sort(moved.begin(), moved.end());
  std::vector<Operation *> others{users[0], users[2]};
  std::sort(others.begin(), others.end());
  CHECK(moved == others);
  CHECK(after->operand(0) == value);
  CHECK(after->operand(1) == value);
  CHECK(users[0]->operand(1) == replacement);
}
