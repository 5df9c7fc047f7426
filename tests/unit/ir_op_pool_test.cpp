#include "shardlab/ir/ir.h"
#include "shardlab/ir/op_pool.h"

#include <doctest/doctest.h>

#include <cstdint>

using namespace shardlab;

TEST_CASE("OpPool hands out aligned slots and reuses given-back ones") {
  OpPool pool(40);
  void *a = pool.allocate();
  void *b = pool.allocate();
  CHECK(a != b);
  CHECK(reinterpret_cast<uintptr_t>(a) % alignof(std::max_align_t) == 0);
  CHECK(reinterpret_cast<uintptr_t>(b) % alignof(std::max_align_t) == 0);
  CHECK(&OpPool::ownerOf(a) == &pool);
  CHECK(pool.live() == 2);
  OpPool::release(a);
  CHECK(pool.live() == 1);
  CHECK(pool.allocate() == a); // the freed slot comes back first
  OpPool::release(nullptr);    // like delete nullptr: nothing happens
  CHECK(pool.live() == 2);
}

TEST_CASE("OpPool slots do not overlap across slabs") {
  OpPool pool(24);
  std::vector<unsigned char *> slots;
  for (int i = 0; i < 2000; ++i) { // several slabs
    slots.push_back(static_cast<unsigned char *>(pool.allocate()));
    for (int k = 0; k < 24; ++k)
      slots.back()[k] = static_cast<unsigned char>(i);
  }
  for (size_t i = 0; i < slots.size(); ++i)
    for (int k = 0; k < 24; ++k)
      REQUIRE(slots[i][k] == static_cast<unsigned char>(i));
  for (unsigned char *slot : slots)
    OpPool::release(slot);
  CHECK(pool.live() == 0);
}

TEST_CASE("Operations live in their context's pool and give slots back") {
  auto ctx = std::make_shared<Context>();
  {
    Module module(ctx);
    CHECK(ctx->ops.live() == 1); // the module op
    auto op = Operation::create(ctx->ops, ctx->intern("test.op"), nullptr, {});
    CHECK(&op->pool() == &ctx->ops);
    CHECK(ctx->ops.liveNamed("test.op") == 1);
    CHECK(ctx->ops.liveNamed("test.other") == 0);
    module.body().push_back(std::move(op));
    CHECK(ctx->ops.live() == 2);
    module.body().erase(module.body().front());
    CHECK(ctx->ops.live() == 1);
    CHECK(ctx->ops.liveNamed("test.op") == 0); // passes may skip their walk
  }
  CHECK(ctx->ops.live() == 0);
}

TEST_CASE("an op's walked fields sit in its slot's first two cache lines") {
  // Walks read the list link, the regions, the name and info (the slot's
  // first line, after the pool's header) and the attributes (the second).
  auto ctx = std::make_shared<Context>();
  Module module(ctx);
  auto line = [](const void *address) {
    return reinterpret_cast<uintptr_t>(address) / 64;
  };
  for (int i = 0; i < 1100; ++i) { // past the first slab
    Operation *op = module.body().push_back(
        Operation::create(ctx->ops, "test.op", nullptr, {}));
    const uintptr_t first = line(op);
    REQUIRE(line(&op->name) == first);
    REQUIRE(line(reinterpret_cast<const char *>(&op->info + 1) - 1) == first);
    REQUIRE(line(&op->attrs) <= first + 1);
    REQUIRE(line(reinterpret_cast<const char *>(&op->attrs + 1) - 1) ==
            first + 1);
  }
}

TEST_CASE("the attribute arena remembers whether any unreduced axis exists") {
  AttrArena arena;
  TensorSharding plain;
  plain.mesh.symbol = "mesh";
  arena.sharding(plain);
  arena.shardingPerValue({plain, plain});
  CHECK_FALSE(arena.anyUnreduced()); // verify-unreduced-axes may skip
  TensorSharding unreduced = plain;
  unreduced.unreduced.push_back(AxisRef{"x", std::nullopt});
  arena.shardingPerValue({plain, unreduced});
  CHECK(arena.anyUnreduced());
}

TEST_CASE("the attribute arena uniques equal attributes, and only those") {
  AttrArena arena;
  Context ctx;
  const Attr *one = arena.integer(1, nullptr), *two = arena.integer(2, nullptr);
  auto dict = [&](const Attr *value) {
    return arena.make(Attr{AttrKind::Dict,
                           std::vector<NamedAttr>{{"a", one}, {"b", value}},
                           nullptr,
                           {}});
  };
  // Equal dictionaries are one, whatever storage their names came from.
  std::string name = "b";
  const Attr *spelled = arena.make(
      Attr{AttrKind::Dict,
           std::vector<NamedAttr>{{"a", one}, {std::string_view(name), two}},
           nullptr,
           {}});
  CHECK(dict(two) == spelled);
  CHECK(dict(two) != dict(one));
  // Arrays, strings, symbols, opaque attributes.
  const Attr *array = arena.array({one, two});
  CHECK(arena.array({one, two}) == array);
  CHECK(arena.array({two, one}) != array);
  CHECK(arena.string("x") == arena.string("x"));
  CHECK(arena.string("x") != arena.symbol("x"));
  CHECK(arena.opaque("#stablehlo<comparison_direction GT>") ==
        arena.opaque("#stablehlo<comparison_direction GT>"));
  // Floats bit for bit: 0.0 and -0.0 are two attributes, a NaN is one.
  Type f64 = ctx.types.element("f64");
  auto real = [&](uint64_t bits, Type type) {
    return arena.make(Attr{AttrKind::Float, FloatBits{bits}, type, {}});
  };
  CHECK(real(0x3FE0000000000000, f64) == real(0x3FE0000000000000, f64));
  CHECK(real(0, f64) != real(0x8000000000000000, f64));
  CHECK(real(0x7FF8000000000001, f64) == real(0x7FF8000000000001, f64));
  CHECK(real(0x7FF8000000000001, f64) != real(0x7FF8000000000000, f64));
  // The attribute type is part of the value.
  Type f32 = ctx.types.element("f32");
  CHECK(real(0x3F800000, f32) != real(0x3F800000, f64));
  // Locations are not uniqued: the parser fills their body in later.
  CHECK(arena.location("unknown") != arena.location("unknown"));
}
