#include "module_gen.h"

#include <algorithm>
#include <random>

namespace shardlab::testgen {

namespace {

using Rng = std::mt19937_64;

int64_t pick(Rng &rng, const std::vector<int64_t> &choices) {
  return choices[std::uniform_int_distribution<size_t>(0, choices.size() -
                                                              1)(rng)];
}

int uniform(Rng &rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

bool chance(Rng &rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

class Generator {
public:
  Generator(uint64_t seed, const GenOptions &options)
      : rng_(seed), options_(options) {}

  ModuleSpec run();

private:
  int newValue(std::vector<int64_t> shape) {
    spec_.values.push_back({std::move(shape)});
    return static_cast<int>(spec_.values.size()) - 1;
  }
  int newArg(std::vector<int64_t> shape) {
    int id = newValue(std::move(shape));
    spec_.args.push_back(id);
    spec_.arg_shardings.push_back(maybeSharding(id, 0.5));
    return id;
  }
  const std::vector<int64_t> &shape(int id) { return spec_.values[id].shape; }
  std::vector<int64_t> randomShape(int rank) {
    std::vector<int64_t> s;
    for (int i = 0; i < rank; ++i)
      s.push_back(pick(rng_, {2, 4, 8, 16}));
    return s;
  }
  std::optional<GenSharding> maybeSharding(int id, double p) {
    if (!chance(rng_, p))
      return std::nullopt;
    return randomSharding(shape(id));
  }
  GenSharding randomSharding(const std::vector<int64_t> &shape);
  int operandOfRank(int min_rank, int max_rank);
  int valueWithShape(const std::vector<int64_t> &s);
  int scalarZero();
  void addOp(const std::string &format, std::vector<int> operands,
             std::vector<int64_t> result_shape);

  void unary(int x);
  void binary(int x);
  void dot(int x);
  void reshape(int x);
  void transpose(int x);
  void reduce(int x);
  void broadcast(int x);
  void constraint(int x);

  Rng rng_;
  GenOptions options_;
  ModuleSpec spec_;
  std::vector<int> live_; ///< non-scalar values ops may use
  int zero_ = -1;
};

GenSharding Generator::randomSharding(const std::vector<int64_t> &shape) {
  GenSharding s;
  std::vector<bool> used(spec_.axis_sizes.size(), false);
  auto free_axes = [&]() {
    std::vector<int> out;
    for (size_t a = 0; a < used.size(); ++a)
      if (!used[a])
        out.push_back(static_cast<int>(a));
    std::shuffle(out.begin(), out.end(), rng_);
    return out;
  };
  for (int64_t size : shape) {
    GenDim dim;
    dim.closed = chance(rng_, 0.35);
    if (chance(rng_, 0.1))
      dim.priority = uniform(rng_, 0, 2);
    int64_t remaining = size;
    if (chance(rng_, 0.55))
      for (int a : free_axes()) {
        if (chance(rng_, 0.4) && !dim.axes.empty())
          break;
        int64_t axis_size = spec_.axis_sizes[a];
        GenAxis axis{a, 0, axis_size};
        if (axis_size >= 4 && chance(rng_, 0.3)) // a sub-axis
          axis = chance(rng_, 0.5) ? GenAxis{a, 1, 2} : GenAxis{a, 2, 2};
        if (remaining % axis.size != 0)
          continue;
        remaining /= axis.size;
        used[a] = true;
        dim.axes.push_back(axis);
        // A sub-axis leaves the rest of its axis unused in this sharding.
      }
    if (dim.closed && dim.axes.empty())
      dim.priority = -1; // Shardy rejects a priority on an empty closed dim
    s.dims.push_back(std::move(dim));
  }
  if (chance(rng_, 0.2))
    for (size_t a = 0; a < used.size(); ++a)
      if (!used[a] && chance(rng_, 0.5)) {
        used[a] = true;
        s.replicated.push_back({static_cast<int>(a), 0, spec_.axis_sizes[a]});
      }
  return s;
}

int Generator::operandOfRank(int min_rank, int max_rank) {
  std::vector<int> candidates;
  for (int id : live_) {
    int rank = static_cast<int>(shape(id).size());
    if (rank >= min_rank && rank <= max_rank)
      candidates.push_back(id);
  }
  if (candidates.empty())
    return -1;
  // Prefer recent values, so the module is a chain more than a fan.
  size_t n = candidates.size();
  size_t from = n > 3 ? n - 3 : 0;
  if (chance(rng_, 0.3))
    from = 0;
  return candidates[std::uniform_int_distribution<size_t>(from, n - 1)(rng_)];
}

int Generator::valueWithShape(const std::vector<int64_t> &s) {
  std::vector<int> candidates;
  for (int id : live_)
    if (shape(id) == s)
      candidates.push_back(id);
  if (candidates.empty() || chance(rng_, 0.4)) {
    int id = newArg(s);
    live_.push_back(id);
    return id;
  }
  return candidates[std::uniform_int_distribution<size_t>(0, candidates.size() -
                                                                 1)(rng_)];
}

int Generator::scalarZero() {
  if (zero_ < 0) {
    zero_ = newValue({});
    GenOp op;
    op.format = "stablehlo.constant dense<0.000000e+00>$A : $TR";
    op.result = zero_;
    spec_.ops.insert(spec_.ops.begin(), op);
  }
  return zero_;
}

void Generator::addOp(const std::string &format, std::vector<int> operands,
                      std::vector<int64_t> result_shape) {
  GenOp op;
  op.format = format;
  op.operands = std::move(operands);
  op.result = newValue(std::move(result_shape));
  op.sharding = maybeSharding(op.result, 0.12);
  spec_.ops.push_back(std::move(op));
  live_.push_back(spec_.ops.back().result);
}

void Generator::unary(int x) {
  static const std::vector<std::string> names = {"negate", "abs", "exponential",
                                                 "tanh"};
  const std::string &name = names[uniform(rng_, 0, 3)];
  addOp("stablehlo." + name + " $0$A : $TR", {x}, shape(x));
}

void Generator::binary(int x) {
  static const std::vector<std::string> names = {"add", "multiply", "subtract",
                                                 "maximum"};
  const std::string &name = names[uniform(rng_, 0, 3)];
  int y = valueWithShape(shape(x));
  if (chance(rng_, 0.5))
    std::swap(x, y);
  addOp("stablehlo." + name + " $0, $1$A : $TR", {x, y}, shape(x));
}

void Generator::dot(int x) {
  std::vector<int64_t> s = shape(x);
  int64_t n = pick(rng_, {2, 4, 8, 16});
  if (s.size() == 2) {
    int y = valueWithShape({s[1], n});
    addOp("stablehlo.dot_general $0, $1, contracting_dims = [1] x [0]$A : "
          "($T0, $T1) -> $TR",
          {x, y}, {s[0], n});
  } else {
    int y = valueWithShape({s[0], s[2], n});
    addOp("stablehlo.dot_general $0, $1, batching_dims = [0] x [0], "
          "contracting_dims = [2] x [1]$A : ($T0, $T1) -> $TR",
          {x, y}, {s[0], s[1], n});
  }
}

void Generator::reshape(int x) {
  std::vector<int64_t> s = shape(x);
  std::vector<int64_t> r = s;
  if (s.size() >= 2 && (s.size() >= 3 || chance(rng_, 0.5))) {
    size_t d =
        static_cast<size_t>(uniform(rng_, 0, static_cast<int>(s.size()) - 2));
    r[d] = s[d] * s[d + 1];
    r.erase(r.begin() + static_cast<std::ptrdiff_t>(d) + 1);
  } else {
    size_t d =
        static_cast<size_t>(uniform(rng_, 0, static_cast<int>(s.size()) - 1));
    if (s[d] < 4) {
      unary(x);
      return;
    }
    int64_t major = chance(rng_, 0.5) ? 2 : s[d] / 2;
    r[d] = major;
    r.insert(r.begin() + static_cast<std::ptrdiff_t>(d) + 1, s[d] / major);
  }
  addOp("stablehlo.reshape $0$A : ($T0) -> $TR", {x}, r);
}

void Generator::transpose(int x) {
  std::vector<int64_t> s = shape(x);
  std::vector<int64_t> perm(s.size());
  for (size_t i = 0; i < perm.size(); ++i)
    perm[i] = static_cast<int64_t>(i);
  std::shuffle(perm.begin(), perm.end(), rng_);
  std::vector<int64_t> r;
  std::string dims;
  for (int64_t p : perm) {
    r.push_back(s[p]);
    dims += (dims.empty() ? "" : ", ") + std::to_string(p);
  }
  addOp("stablehlo.transpose $0, dims = [" + dims + "]$A : ($T0) -> $TR", {x},
        r);
}

void Generator::reduce(int x) {
  std::vector<int64_t> s = shape(x);
  int d = uniform(rng_, 0, static_cast<int>(s.size()) - 1);
  std::vector<int64_t> r = s;
  r.erase(r.begin() + d);
  int zero = scalarZero();
  addOp("stablehlo.reduce($0 init: $1) applies stablehlo.add across "
        "dimensions = [" +
            std::to_string(d) + "]$A : ($T0, $T1) -> $TR",
        {x, zero}, r);
}

void Generator::broadcast(int x) {
  std::vector<int64_t> s = shape(x);
  int at = uniform(rng_, 0, static_cast<int>(s.size()));
  std::vector<int64_t> r = s;
  r.insert(r.begin() + at, pick(rng_, {2, 4, 8}));
  std::string dims;
  for (int i = 0; i < static_cast<int>(s.size()); ++i)
    dims += (i ? ", " : "") + std::to_string(i < at ? i : i + 1);
  addOp("stablehlo.broadcast_in_dim $0, dims = [" + dims + "]$A : ($T0) -> $TR",
        {x}, r);
}

void Generator::constraint(int x) {
  GenOp op;
  op.operands = {x};
  op.result = newValue(shape(x));
  op.constraint = randomSharding(shape(x));
  spec_.ops.push_back(std::move(op));
  live_.push_back(spec_.ops.back().result);
}

ModuleSpec Generator::run() {
  int n_axes = uniform(rng_, 1, 3);
  for (int i = 0; i < n_axes; ++i)
    spec_.axis_sizes.push_back(pick(rng_, {2, 2, 4}));
  int n_args = uniform(rng_, 1, 2);
  for (int i = 0; i < n_args; ++i)
    live_.push_back(newArg(randomShape(uniform(rng_, 1, 3))));
  int n_ops = uniform(rng_, options_.min_ops, options_.max_ops);
  for (int i = 0; i < n_ops; ++i) {
    int kind = uniform(rng_, 0, 99);
    int x = operandOfRank(1, 4);
    if (kind < 20) {
      unary(x);
    } else if (kind < 38) {
      binary(x);
    } else if (kind < 50) {
      int y = operandOfRank(2, 3);
      y >= 0 ? dot(y) : unary(x);
    } else if (kind < 62) {
      reshape(x);
    } else if (kind < 72) {
      int y = operandOfRank(2, 4);
      y >= 0 ? transpose(y) : unary(x);
    } else if (kind < 82) {
      int y = operandOfRank(2, 4);
      y >= 0 ? reduce(y) : unary(x);
    } else if (kind < 92) {
      int y = operandOfRank(1, 3);
      y >= 0 ? broadcast(y) : unary(x);
    } else {
      constraint(x);
    }
  }
  spec_.results.push_back(live_.back());
  if (live_.size() > 2 && chance(rng_, 0.5))
    spec_.results.push_back(live_[live_.size() / 2]);
  for (int id : spec_.results)
    spec_.result_shardings.push_back(maybeSharding(id, 0.3));
  return spec_;
}

// ---------------------------------------------------------------- render

std::string typeOf(const std::vector<int64_t> &shape) {
  std::string t = "tensor<";
  for (int64_t d : shape)
    t += std::to_string(d) + "x";
  return t + "f32>";
}

class Renderer {
public:
  Renderer(const ModuleSpec &spec, const Naming &naming)
      : spec_(spec), naming_(naming) {
    names_.resize(spec.values.size());
    int next = 0;
    for (size_t i = 0; i < spec.args.size(); ++i)
      names_[spec.args[i]] =
          naming.value_prefix.empty()
              ? "%arg" + std::to_string(i)
              : "%" + naming.value_prefix + "a" + std::to_string(spec.args[i]);
    for (const GenOp &op : spec.ops)
      names_[op.result] =
          naming.value_prefix.empty()
              ? "%" + std::to_string(next++)
              : "%" + naming.value_prefix + std::to_string(op.result);
  }

  std::string run();

private:
  std::string axis(const GenAxis &a) {
    std::string s = "\"" + naming_.axis_names[a.axis] + "\"";
    if (a.pre > 0)
      s += ":(" + std::to_string(a.pre) + ")" + std::to_string(a.size);
    return s;
  }
  std::string body(const GenSharding &s) {
    std::string out = "<@" + naming_.mesh_name + ", [";
    for (size_t d = 0; d < s.dims.size(); ++d) {
      const GenDim &dim = s.dims[d];
      out += d ? ", {" : "{";
      for (size_t i = 0; i < dim.axes.size(); ++i)
        out += (i ? ", " : "") + axis(dim.axes[i]);
      if (!dim.closed)
        out += dim.axes.empty() ? "?" : ", ?";
      out += "}";
      if (dim.priority >= 0)
        out += "p" + std::to_string(dim.priority);
    }
    out += "]";
    if (!s.replicated.empty()) {
      out += ", replicated={";
      for (size_t i = 0; i < s.replicated.size(); ++i)
        out += (i ? ", " : "") + axis(s.replicated[i]);
      out += "}";
    }
    return out + ">";
  }
  std::string argAttr(const std::optional<GenSharding> &s) {
    return s ? " {sdy.sharding = #sdy.sharding" + body(*s) + "}" : "";
  }
  std::string op(const GenOp &op);

  const ModuleSpec &spec_;
  const Naming &naming_;
  std::vector<std::string> names_;
};

std::string Renderer::op(const GenOp &op) {
  const std::string &result = names_[op.result];
  const std::vector<int64_t> &result_shape = spec_.values[op.result].shape;
  if (op.constraint)
    return "  " + result + " = sdy.sharding_constraint " +
           names_[op.operands[0]] + " " + body(*op.constraint) + " : " +
           typeOf(result_shape) + "\n";
  std::string text;
  const std::string &f = op.format;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '$') {
      text += f[i];
      continue;
    }
    char c = f[i + 1];
    if (c == 'A') {
      if (op.sharding)
        text += " {sdy.sharding = #sdy.sharding_per_value<[" +
                body(*op.sharding).substr(0) + "]>}";
      ++i;
    } else if (c == 'T') {
      if (f[i + 2] == 'R') {
        text += typeOf(result_shape);
      } else {
        text += typeOf(spec_.values[op.operands[f[i + 2] - '0']].shape);
      }
      i += 2;
    } else {
      text += names_[op.operands[c - '0']];
      ++i;
    }
  }
  return "  " + result + " = " + text + "\n";
}

std::string Renderer::run() {
  std::string out = "sdy.mesh @" + naming_.mesh_name + " = <[";
  for (size_t a = 0; a < spec_.axis_sizes.size(); ++a)
    out += (a ? ", \"" : "\"") + naming_.axis_names[a] +
           "\"=" + std::to_string(spec_.axis_sizes[a]);
  out += "]>\n\nfunc.func @main(";
  for (size_t i = 0; i < spec_.args.size(); ++i)
    out += (i ? ", " : "") + names_[spec_.args[i]] + ": " +
           typeOf(spec_.values[spec_.args[i]].shape) +
           argAttr(spec_.arg_shardings[i]);
  out += ") -> (";
  for (size_t i = 0; i < spec_.results.size(); ++i)
    out += (i ? ", " : "") + typeOf(spec_.values[spec_.results[i]].shape) +
           argAttr(spec_.result_shardings[i]);
  out += ") {\n";
  for (const GenOp &o : spec_.ops)
    out += op(o);
  out += "  return ";
  std::string types;
  for (size_t i = 0; i < spec_.results.size(); ++i) {
    out += (i ? ", " : "") + names_[spec_.results[i]];
    types += (i ? ", " : "") + typeOf(spec_.values[spec_.results[i]].shape);
  }
  out += " : " + types + "\n}\n";
  return out;
}

} // namespace

ModuleSpec generateModule(uint64_t seed, const GenOptions &options) {
  return Generator(seed, options).run();
}

Naming defaultNaming(const ModuleSpec &spec) {
  static const char *names[] = {"x", "y", "z", "w"};
  Naming naming;
  for (size_t a = 0; a < spec.axis_sizes.size(); ++a)
    naming.axis_names.push_back(names[a % 4]);
  return naming;
}

std::string renderModule(const ModuleSpec &spec, const Naming &naming) {
  return Renderer(spec, naming).run();
}

} // namespace shardlab::testgen
