// shardlab-cost-conformance: runs every case of XLA's cost-model conformance
// vectors (vectors.json) through shardlab's cost model, prints a table per
// group and `N passed, M failed`, optionally writes a JSON report, and fails
// when a case listed in the passing list (regression guard) does not pass.
#include "vector_cases.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

namespace {

using nlohmann::json;

bool MissingDataAllowed() {
  const char *ci = std::getenv("CI");
  const char *allow = std::getenv("SHARDLAB_ALLOW_MISSING_DATA");
  const bool under_ci =
      ci && (std::string(ci) == "true" || std::string(ci) == "1");
  return !under_ci && allow && std::string(allow) == "1";
}

/// The default vectors file: $SHARDLAB_SHARED's, else the one configured.
std::string DefaultVectors() {
  if (const char *shared = std::getenv("SHARDLAB_SHARED"))
    return std::string(shared) + "/conformance/xla/vectors.json";
  return SHARDLAB_DEFAULT_VECTORS;
}

struct Args {
  std::string vectors = DefaultVectors();
  std::string json_report;
  std::string passing_list;
};

struct CaseResult {
  std::string id, error;
  double expect = 0, actual = 0;
  bool pass = false, upstream_pass = false;
};

bool UpstreamCheck(const json &check, double actual) {
  const std::string kind = check.value("assert", "");
  const double v = check.value("value", 0.0);
  if (kind == "eq")
    return std::fabs(actual - v) <= check.value("resolution", 0.0) / 2;
  if (kind == "near")
    return std::fabs(actual - v) <= check.value("tolerance", 0.0);
  if (kind == "trunc") {
    const double lower = v - std::fabs(v) * 1e-9;
    if (actual >= lower && actual < v + check.value("quantum", 1.0))
      return true;
    return check.value("at_boundary", false); // tolerance is authoritative
  }
  return true;
}

CaseResult RunCase(const std::string &group, const json &setup, const json &c) {
  CaseResult r;
  r.id = group + "/" + c.at("name").get<std::string>();
  r.expect = c.at("expect").get<double>();
  shardlab::Result<double> actual = [&]() {
    try {
      return shardlab::conformance::EvaluateCase(group, setup, c.at("query"));
    } catch (const std::exception &e) {
      return shardlab::Result<double>(
          shardlab::makeError(std::string("malformed case: ") + e.what()));
    }
  }();
  if (!actual) {
    r.error = actual.error().message;
    return r;
  }
  r.actual = *actual;
  r.pass = std::fabs(r.actual - r.expect) <= c.at("tolerance").get<double>();
  r.upstream_pass = !c.contains("upstream_check") ||
                    UpstreamCheck(c["upstream_check"], r.actual);
  r.pass = r.pass && r.upstream_pass;
  return r;
}

void PrintRow(const CaseResult &r, const std::string &name) {
  char line[512];
  std::snprintf(line, sizeof line, "  %-56s %18.10g %18.10g  %s", name.c_str(),
                r.expect, r.actual,
                r.pass ? "PASS" : (r.error.empty() ? "FAIL" : "ERROR"));
  std::cout << line;
  if (!r.error.empty())
    std::cout << "  " << r.error;
  else if (!r.upstream_pass)
    std::cout << "  (upstream check failed)";
  std::cout << "\n";
}

bool ParseArgs(int argc, char **argv, Args *a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--json" || arg == "--passing") && i + 1 < argc)
      (arg == "--json" ? a->json_report : a->passing_list) = argv[++i];
    else if (!arg.empty() && arg[0] != '-')
      a->vectors = arg;
    else
      return false;
  }
  return true;
}

std::set<std::string> ReadPassingList(const std::string &path) {
  std::set<std::string> ids;
  std::ifstream in(path);
  if (!in) {
    std::cerr << "shardlab-cost-conformance: passing list " << path
              << " not found\n";
    std::exit(2);
  }
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#')
      ids.insert(line);
  return ids;
}

} // namespace

int main(int argc, char **argv) {
  Args args;
  if (!ParseArgs(argc, argv, &args)) {
    std::cerr << "usage: shardlab-cost-conformance [vectors.json] "
                 "[--json REPORT] [--passing LIST]\n";
    return 2;
  }
  std::ifstream in(args.vectors);
  if (!in) {
    // Missing data is a failure; a person may allow it (never under CI), and
    // then ctest reports the test as not run (SKIP_RETURN_CODE 77).
    if (MissingDataAllowed()) {
      std::cout << "NOT RUN: " << args.vectors << " not found\n";
      return 77;
    }
    std::cerr << "shardlab-cost-conformance: " << args.vectors
              << " not found. The XLA vectors live in the shared data folder "
                 "(../shared/conformance/xla beside the checkout, or "
                 "$SHARDLAB_SHARED/conformance/xla); pass the file as an "
                 "argument, or run scripts/test.sh --allow-missing-data to go "
                 "on without it.\n";
    return 2;
  }
  const json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.contains("groups")) {
    std::cerr << args.vectors << ": not a conformance vector file\n";
    return 2;
  }
  int passed = 0, failed = 0;
  json report = {{"groups", json::array()}};
  std::set<std::string> passing_ids;
  for (const json &g : doc["groups"]) {
    const std::string name = g.at("name").get<std::string>();
    std::cout << "== " << name << " (" << g["cases"].size() << " cases)\n";
    json group_report = {{"name", name}, {"cases", json::array()}};
    int group_pass = 0;
    for (const json &c : g["cases"]) {
      CaseResult r = RunCase(name, g.at("setup"), c);
      PrintRow(r, c.at("name").get<std::string>());
      (r.pass ? passed : failed) += 1;
      group_pass += r.pass;
      if (r.pass)
        passing_ids.insert(r.id);
      group_report["cases"].push_back({{"name", c.at("name")},
                                       {"expect", r.expect},
                                       {"actual", r.actual},
                                       {"pass", r.pass},
                                       {"upstream_pass", r.upstream_pass},
                                       {"error", r.error}});
    }
    std::cout << "   " << group_pass << "/" << g["cases"].size() << " passed\n";
    report["groups"].push_back(group_report);
  }
  int regressions = 0;
  if (!args.passing_list.empty()) {
    const std::set<std::string> listed = ReadPassingList(args.passing_list);
    if (listed.empty()) {
      std::cout << "REGRESSION: " << args.passing_list
                << " lists nothing: the gate would check nothing\n";
      ++regressions;
    }
    // A listed case that is gone from the vectors did not run: that fails too.
    for (const std::string &id : listed)
      if (passing_ids.count(id) == 0) {
        std::cout << "REGRESSION: " << id << " is listed as passing\n";
        ++regressions;
      }
  }
  report["passed"] = passed;
  report["failed"] = failed;
  report["regressions"] = regressions;
  if (!args.json_report.empty())
    std::ofstream(args.json_report) << report.dump(2) << "\n";
  std::cout << passed << " passed, " << failed << " failed\n";
  return regressions == 0 ? 0 : 1;
}
