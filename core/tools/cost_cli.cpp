// shardlab-cost argument parsing, table reading and output rendering.
#include "cost_cli.h"

#include "shardlab/api/api.h"
#include "shardlab/cost/perf_table.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <ostream>
#include <sstream>

namespace shardlab::tools {
namespace {

using nlohmann::json;
using shardlab::makeError;
using shardlab::Result;

enum class FlagKind { Int, String, Tables, Bool };

struct Flag {
  const char *name;
  const char *key; // API option name
  FlagKind kind;
  const char *commands; // "c" collective, "g" gemm
};

constexpr Flag kFlags[] = {
    {"--op", "op", FlagKind::String, "c"},
    {"--bytes", "bytes", FlagKind::Int, "c"},
    {"--group-size", "group_size", FlagKind::Int, "c"},
    {"--nodes", "nodes", FlagKind::Int, "c"},
    {"--gpus-per-node", "gpus_per_node", FlagKind::Int, "c"},
    {"--sol-options", "sol_options", FlagKind::String, "c"},
    {"--dtype", "dtype", FlagKind::String, "c"},
    {"--b", "b", FlagKind::Int, "g"},
    {"--m", "m", FlagKind::Int, "g"},
    {"--n", "n", FlagKind::Int, "g"},
    {"--k", "k", FlagKind::Int, "g"},
    {"--dtypes", "dtypes", FlagKind::String, "g"},
    {"--preset", "hardware", FlagKind::String, "cg"},
    {"--mode", "mode", FlagKind::String, "cg"},
    {"--tables", "tables", FlagKind::Tables, "cg"},
    {"--device", "device", FlagKind::String, "cg"},
    {"--json", "", FlagKind::Bool, "cg"},
    {"--dtype-fallback", "dtype_fallback", FlagKind::Bool, "g"},
    {"--table-kind", "table_kind", FlagKind::String, "g"},
};

const char *const kCollectiveRequired[] = {"--op", "--bytes", "--group-size"};
const char *const kGemmRequired[] = {"--m", "--n", "--k"};

const Flag *findFlag(const std::string &name, char command) {
  for (const Flag &f : kFlags)
    if (name == f.name)
      return std::string(f.commands).find(command) != std::string::npos
                 ? &f
                 : nullptr;
  return nullptr;
}

/// A positive decimal integer below 2^62 (no sign, no spaces, no suffix).
Result<int64_t> parsePositive(const std::string &flag, const std::string &v) {
  char *end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || v[0] < '0' || v[0] > '9' || *end != '\0' ||
      errno == ERANGE || n <= 0 || n >= (1LL << 62))
    return makeError(flag + ": expected a positive integer, got '" + v + "'");
  return int64_t(n);
}

Result<bool> setValue(CostCommand &c, const Flag &f, const std::string &v) {
  const std::string flag = f.name;
  if (f.kind == FlagKind::Tables) {
    c.table_paths.push_back(v);
    return true;
  }
  if (c.options.contains(f.key))
    return makeError(flag + ": given more than once");
  if (f.kind == FlagKind::Int) {
    Result<int64_t> n = parsePositive(flag, v);
    if (!n)
      return n.error();
    c.options[f.key] = *n;
    return true;
  }
  if (flag == "--mode" && v != "compatible" && v != "accurate")
    return makeError("--mode: expected compatible or accurate, got '" + v +
                     "'");
  c.options[f.key] = v;
  return true;
}

/// Splits "--flag=value"; `value` is set only when there is an '='.
std::string flagName(const std::string &arg, std::string *value, bool *has) {
  const size_t eq = arg.find('=');
  *has = eq != std::string::npos;
  if (*has)
    *value = arg.substr(eq + 1);
  return arg.substr(0, eq);
}

Result<bool> parseFlags(CostCommand &c, const std::vector<std::string> &args) {
  const char command = c.command[0];
  for (size_t i = 1; i < args.size(); ++i) {
    std::string value;
    bool inline_value = false;
    const std::string name = flagName(args[i], &value, &inline_value);
    if (name == "--help" || name == "-h") {
      c.help = true;
      return true;
    }
    const Flag *f = findFlag(name, command);
    if (!f)
      return makeError("unknown argument '" + args[i] + "' for " + c.command +
                       " (see --help)");
    if (f->kind == FlagKind::Bool) {
      if (*f->key)
        c.options[f->key] = true;
      else
        c.json = true;
      continue;
    }
    if (!inline_value && i + 1 >= args.size())
      return makeError(name + ": missing value");
    if (Result<bool> ok = setValue(c, *f, inline_value ? value : args[++i]);
        !ok)
      return ok.error();
  }
  return true;
}

Result<bool> checkRequired(const CostCommand &c) {
  const bool collective = c.command == "collective";
  for (const char *name :
       collective ? std::vector<const char *>(std::begin(kCollectiveRequired),
                                              std::end(kCollectiveRequired))
                  : std::vector<const char *>(std::begin(kGemmRequired),
                                              std::end(kGemmRequired)))
    if (!c.options.contains(findFlag(name, c.command[0])->key))
      return makeError(c.command + ": " + name + " is required (see --help)");
  return true;
}

} // namespace

const char *costHelp() {
  return "USAGE:\n"
         "  shardlab-cost collective --op OP --bytes N --group-size G\n"
         "      [--nodes K] [--gpus-per-node P] [--preset NAME]\n"
         "      [--tables FILE]... [--sol-options 'k=v,...'] [--dtype T]\n"
         "      [--mode compatible|accurate] [--json]\n"
         "  shardlab-cost gemm --m M --n N --k K [--b B]\n"
         "      [--dtypes bf16xbf16->bf16] [--preset NAME] [--tables FILE]...\n"
         "      [--mode compatible|accurate] [--dtype-fallback] [--json]\n\n"
         "Estimates the time of one collective or GEMM with shardlab's cost\n"
         "model and says how (model, table key, neighbours, formula terms).\n\n"
         "collective:\n"
         "  --op OP            all-reduce, all-gather, reduce-scatter,\n"
         "                     all-to-all or collective-permute\n"
         "  --bytes N          XLA's bytes_transferred (output bytes for\n"
         "                     AR/AG/A2A, input bytes for RS)\n"
         "  --group-size G     GPUs per replica group\n"
         "  --nodes K          nodes the group spans (default 1). K > 1: the\n"
         "                     S-curve alone (no HBM term; all-reduces by\n"
         "                     NCCL's tree where cheaper than the ring); K = "
         "1:\n"
         "                     the tables, else the analytical NVLink model\n"
         "  --gpus-per-node P  GPUs per node (default: the preset's)\n"
         "  --sol-options S    'nic_speed_gbps=25,gpus_per_node=8,...' as in\n"
         "                     --xla_gpu_analytical_latency_estimator_options\n"
         "                     (values > 0 override the preset's defaults;\n"
         "                     tree_all_reduce=0: XLA's ring only)\n"
         "  --dtype T          element type for accumulating ops (default "
         "f32)\n"
         "gemm:\n"
         "  --b, --m, --n, --k batch, rows, columns, contracting size\n"
         "                     (default b = 1)\n"
         "  --dtypes KEY       <lhs>x<rhs>-><out> (default bf16xbf16->bf16)\n"
         "  --dtype-fallback   a dtype key the table lacks reads the bf16\n"
         "                     entries at byte-normalised dims (XLA's rule);\n"
         "                     without it such a query is an error\n"
         "  --table-kind K     default (per dtype key) or user (XLA's\n"
         "                     user-profile path: nearest neighbour on\n"
         "                     byte-normalised dims, dtypes mixed)\n"
         "both:\n"
         "  --preset NAME      h100 (default), h200, b200, a100 or a100-40gb\n"
         "  --tables FILE      *.shardlab.json or XLA text-proto table; may "
         "be\n"
         "                     repeated (merged). Default: the preset's\n"
         "                     (h100, b200: XLA's measured GEMM rates;\n"
         "                     others: analytical)\n"
         "  --device KEY       device of XLA text-proto tables holding "
         "several\n"
         "                     (e.g. sm_90, sm_100_B200)\n"
         "  --mode M           compatible (XLA's numbers, default) or "
         "accurate\n"
         "  --json             print the JSON API's reply: time_us, model,\n"
         "                     explanation\n"
         "  --help             this text\n";
}

Result<CostCommand> parseCostArgs(const std::vector<std::string> &args) {
  CostCommand c;
  if (args.empty())
    return makeError("expected a command: collective or gemm (see --help)");
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    c.help = true;
    return c;
  }
  if (args[0] != "collective" && args[0] != "gemm")
    return makeError("unknown command '" + args[0] +
                     "': expected collective or gemm (see --help)");
  c.command = args[0];
  if (Result<bool> ok = parseFlags(c, args); !ok)
    return ok.error();
  if (c.help)
    return c;
  if (Result<bool> ok = checkRequired(c); !ok)
    return ok.error();
  if (c.command == "collective" && !c.options.contains("nodes"))
    c.options["nodes"] = 1;
  return c;
}

Result<std::string> readTableFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return makeError(path + ": cannot open file");
  const std::streamoff size = in.tellg();
  if (size < 0 || size > cost::kMaxPerfTableFileBytes)
    return cost::tableTooLargeError(path + ": file", size);
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size))
    return makeError(path + ": read failed");
  return text;
}

namespace {

std::string number(const json &v) {
  std::ostringstream out;
  out.precision(10);
  out << (v.is_number() ? v.get<double>() : 0.0);
  return out.str();
}

void renderNeighbour(const json &n, std::ostream &out) {
  out << "\nneighbour (";
  const json &point = n.value("point", json::array());
  for (size_t i = 0; i < point.size(); ++i)
    out << (i ? ", " : "") << point[i].dump();
  out << ") value " << number(n.value("value", json()));
  out << " weight " << number(n.value("weight", json()));
}

} // namespace

std::string renderEstimateText(const json &reply) {
  std::ostringstream out;
  out << "time_us = " << number(reply.value("time_us", json()))
      << "\nmodel: " << reply.value("model", std::string());
  const json &ex = reply.value("explanation", json::object());
  if (!ex.value("key", std::string()).empty())
    out << "\nkey: " << ex.value("key", std::string());
  for (const json &n : ex.value("neighbours", json::array()))
    renderNeighbour(n, out);
  for (const json &t : ex.value("terms", json::array()))
    out << "\n"
        << t.value("name", std::string()) << " = "
        << number(t.value("value", json())) << " "
        << t.value("unit", std::string());
  if (!ex.value("note", std::string()).empty())
    out << "\nnote: " << ex.value("note", std::string());
  return out.str();
}

int runCost(CostCommand c, std::ostream &out, std::ostream &err) {
  if (c.help) {
    out << costHelp();
    return 0;
  }
  if (!c.table_paths.empty())
    c.options["tables"] = json::array();
  for (const std::string &path : c.table_paths) {
    Result<std::string> text = readTableFile(path);
    if (!text) {
      err << "shardlab-cost: error: " << text.error().message << "\n";
      return 1;
    }
    c.options["tables"].push_back(std::move(*text));
  }
  const std::string options = c.options.dump();
  const std::string reply_text = c.command == "gemm"
                                     ? api::estimateGemmJson(options)
                                     : api::estimateCollectiveJson(options);
  const json reply = json::parse(reply_text, nullptr, false);
  if (!reply.is_object() || !reply.value("ok", false)) {
    err << "shardlab-cost: error: "
        << (reply.is_object() ? reply.value("error", reply_text) : reply_text)
        << "\n";
    return 1;
  }
  for (const json &w : reply.value("warnings", json::array()))
    err << "shardlab-cost: warning: "
        << (w.is_string() ? w.get<std::string>() : w.dump()) << "\n";
  out << (c.json ? reply_text : renderEstimateText(reply)) << "\n";
  return 0;
}

} // namespace shardlab::tools
