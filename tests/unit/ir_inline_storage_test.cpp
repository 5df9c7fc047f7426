// AxisName (inline axis names, heap beyond 23 bytes), InlineArray and
// SmallVector (an op's operands, results and attributes): the storage
// choices made for speed must keep value semantics exactly.
#include "shardlab/ir/inline_storage.h"
#include "shardlab/ir/ir.h"
#include "shardlab/sharding/axis_name.h"

#include <doctest/doctest.h>

#include <string>
#include <unordered_set>
#include <vector>

using namespace shardlab;

TEST_CASE("AxisName keeps short and long names, compares by content") {
  const std::string long_name(40, 'q'); // past the 23 inline bytes
  for (const std::string &text :
       {std::string(), std::string("x"), std::string(23, 'a'),
        std::string(24, 'b'), long_name}) {
    AxisName name(text);
    CHECK(name.view() == text);
    CHECK(name.size() == text.size());
    CHECK(name.empty() == text.empty());
    AxisName copy = name;
    CHECK(copy == name);
    CHECK(copy.view() == text);
    AxisName moved = std::move(copy);
    CHECK(moved == name);
    CHECK(copy.empty()); // NOLINT: moved-from is empty by design
    AxisName assigned("other");
    assigned = name;
    CHECK(assigned == name);
    assigned = AxisName("again");
    CHECK(assigned == "again");
  }
  CHECK(AxisName("ab") != AxisName("abc"));
  CHECK(AxisName(long_name) != AxisName(long_name + "r"));
  CHECK(AxisName(std::string(23, 'a')) != AxisName(std::string(24, 'a')));
  CHECK(AxisName("a") < AxisName("b"));
  CHECK(AxisName(long_name) == std::string_view(long_name));
  std::unordered_set<AxisName> set{AxisName("x"), AxisName(long_name)};
  CHECK(set.count(AxisName(long_name)) == 1);
  CHECK(set.count(AxisName("y")) == 0);
  std::vector<AxisName> many(100, AxisName(long_name));
  many.resize(300, AxisName("z")); // reallocates: long names copied
  CHECK(many[0] == long_name);
  CHECK(many[299] == "z");
}

TEST_CASE("AxisRef with AxisName keeps its equality and the mesh lookup") {
  Mesh mesh;
  mesh.axes.push_back({"data", 4});
  mesh.axes.push_back({std::string(30, 'm'), 2});
  CHECK(mesh.axisSize("data") == 4);
  CHECK(mesh.axisSize(std::string(30, 'm')) == 2);
  CHECK_FALSE(mesh.axisSize("dat").has_value());
  CHECK(mesh.axisIndex(std::string(30, 'm')) == 1);
  AxisRef a{"data", SubAxisInfo{1, 2}}, b{"data", SubAxisInfo{1, 2}};
  CHECK(a == b);
  b.sub->size = 4;
  CHECK_FALSE(a == b);
}

TEST_CASE("InlineArray holds a few elements inline and more on the heap") {
  InlineArray<std::string, 2> array;
  CHECK(array.empty());
  array.reset(2);
  array[0] = "a";
  array[1] = std::string(100, 'b');
  const std::string *inline_address = &array[0];
  CHECK(array.size() == 2);
  array.reset(5); // past the inline capacity
  CHECK(array.size() == 5);
  for (const std::string &s : array)
    CHECK(s.empty()); // reset makes fresh default elements
  array[4] = "e";
  CHECK(array[4] == "e");
  array.reset(1);
  CHECK(&array[0] == inline_address); // back inline
  array.reset(0);
  CHECK(array.begin() == array.end());
}

TEST_CASE("SmallVector inserts, erases and copies past its inline size") {
  SmallVector<int, 2> list;
  for (int i = 0; i < 10; ++i)
    list.insert(list.size() / 2, i);
  CHECK(list.size() == 10);
  std::vector<int> seen(list.begin(), list.end());
  CHECK(seen == std::vector<int>{1, 3, 5, 7, 9, 8, 6, 4, 2, 0});
  list.erase(0);
  list.erase(list.size() - 1);
  SmallVector<int, 2> copy = list;
  CHECK(std::vector<int>(copy.begin(), copy.end()) ==
        std::vector<int>{3, 5, 7, 9, 8, 6, 4, 2});
  list.clear();
  CHECK(list.empty());
  CHECK(copy.size() == 8);
  copy = list;
  CHECK(copy.empty());
}

TEST_CASE("An op with many operands, results and attributes keeps them all") {
  auto ctx = std::make_shared<Context>();
  Module module(ctx);
  Block &body = module.body();
  Type f32 = ctx->types.element("f32");
  auto producer = Operation::create(ctx->ops, ctx->intern("test.make"), nullptr,
                                    Location{});
  producer->setResultTypes(std::vector<Type>(5, f32));
  Operation *made = body.push_back(std::move(producer));
  std::vector<Value *> values;
  for (size_t i = 0; i < 5; ++i)
    values.push_back(made->result(i));
  auto user =
      Operation::create(ctx->ops, ctx->intern("test.use"), nullptr, Location{});
  user->setOperands(values);
  for (const char *name : {"e", "a", "d", "b", "c"})
    user->attrs.set(ctx->intern(name), ctx->attrs.unit());
  Operation *used = body.push_back(std::move(user));
  CHECK(used->numOperands() == 5);
  for (size_t i = 0; i < 5; ++i) {
    CHECK(used->operand(i) == made->result(i));
    CHECK(made->result(i)->hasOneUse());
  }
  std::string order;
  for (const NamedAttr &entry : used->attrs.entries())
    order += entry.name;
  CHECK(order == "abcde");
  CHECK(used->attrs.erase("c"));
  CHECK(used->attrs.get("c") == nullptr);
  CHECK(used->attrs.entries().size() == 4);
  used->setOperands({made->result(0)});
  CHECK(used->numOperands() == 1);
  CHECK(made->result(0)->hasOneUse());
  CHECK_FALSE(made->result(4)->hasUses());
  CHECK(used->dialect() == "test");
}
