// The registry's mechanics: the stage tables joined in pipeline order,
// option checking, Shardy's option syntax, help text, docs/passes.md and
// -mlir-timing. The declarations themselves live with each stage
// (import/import_passes.cpp, ...).
#include "shardlab/passes/pass_registry.h"

#include "stages.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace shardlab {

const std::vector<PassInfo> &allPasses() {
  static const std::vector<PassInfo> passes = [] {
    std::vector<PassInfo> all;
    addImportPasses(all);
    addPropagationPasses(all);
    addExportPasses(all);
    addCanonicalizePasses(all);
    addXlaPasses(all);
    addStrategyPasses(all);
    addGpuPasses(all);
    return all;
  }();
  return passes;
}

const PassInfo *lookupPass(std::string_view flag) {
  for (const PassInfo &pass : allPasses())
    if (pass.flag == flag)
      return &pass;
  return nullptr;
}

namespace {

std::string_view typeName(OptionType type) {
  switch (type) {
  case OptionType::Bool:
    return "bool";
  case OptionType::Int:
    return "int";
  case OptionType::String:
    return "string";
  }
  return "?";
}

// "its options: a (bool), b (int)" or "it has no options".
std::string optionList(const PassInfo &pass) {
  if (pass.options.empty())
    return "it has no options";
  std::string out = "its options: ";
  for (size_t i = 0; i < pass.options.size(); ++i) {
    const OptionDecl &option = pass.options[i];
    out += (i ? ", " : "") + std::string(option.name) + " (" +
           std::string(typeName(option.type)) + ")";
  }
  return out;
}

const OptionDecl *findOption(const PassInfo &pass, std::string_view name) {
  for (const OptionDecl &option : pass.options)
    if (option.name == name)
      return &option;
  return nullptr;
}

bool choiceAllowed(std::string_view choices, std::string_view value) {
  size_t start = 0;
  while (start <= choices.size()) {
    size_t bar = choices.find('|', start);
    if (bar == std::string_view::npos)
      bar = choices.size();
    if (choices.substr(start, bar - start) == value)
      return true;
    start = bar + 1;
  }
  return false;
}

// `value` in the canonical spelling of `option`'s type ("true"/"false" for
// bools); false when it is not a value of that type.
bool normalise(const OptionDecl &option, std::string &value) {
  switch (option.type) {
  case OptionType::Bool:
    if (std::optional<bool> flag = parseBoolOption(value)) {
      value = *flag ? "true" : "false";
      return true;
    }
    return false;
  case OptionType::Int: {
    int64_t parsed = 0;
    auto [end, ec] =
        std::from_chars(value.data(), value.data() + value.size(), parsed);
    return ec == std::errc() && end == value.data() + value.size();
  }
  case OptionType::String:
    return option.choices.empty() || choiceAllowed(option.choices, value);
  }
  return false;
}

std::string expectedValues(const OptionDecl &option) {
  if (option.type == OptionType::Bool)
    return "true or false";
  if (option.type == OptionType::Int)
    return "an integer";
  std::string choices(option.choices);
  for (char &c : choices)
    if (c == '|')
      c = ',';
  return "one of " + choices;
}

} // namespace

std::optional<bool> parseBoolOption(std::string_view text) {
  if (text == "true" || text == "1")
    return true;
  if (text == "false" || text == "0")
    return false;
  return std::nullopt;
}

Result<PassOptions> PassOptions::resolve(const PassInfo &pass,
                                         const RawPassOptions &raw) {
  PassOptions out;
  out.pass_ = &pass;
  const std::string flag = "-" + std::string(pass.flag);
  for (const auto &[name, written] : raw) {
    const OptionDecl *option = findOption(pass, name);
    if (!option)
      return makeError("pass '" + flag + "' has no option '" + name + "'; " +
                       optionList(pass));
    std::string value = written;
    if (!normalise(*option, value))
      return makeError("option '" + name + "' of pass '" + flag + "' takes " +
                       expectedValues(*option) + ", not '" + written + "'");
    out.values_[name] = value;
    out.given_.insert(name);
  }
  for (const OptionDecl &option : pass.options)
    out.values_.try_emplace(std::string(option.name), option.default_value);
  return out;
}

const std::string &PassOptions::value(std::string_view name,
                                      OptionType type) const {
  const OptionDecl *option = pass_ ? findOption(*pass_, name) : nullptr;
  if (!option || option->type != type) {
    // A pass reading what it did not declare is a bug in shardlab, caught
    // by the first test that runs the pass, not a user error.
    std::fprintf(stderr,
                 "shardlab internal error: pass '-%s' reads option '%.*s' "
                 "as %.*s, which it does not declare\n",
                 pass_ ? std::string(pass_->flag).c_str() : "?",
                 int(name.size()), name.data(), int(typeName(type).size()),
                 typeName(type).data());
    std::abort();
  }
  return values_.find(name)->second;
}

bool PassOptions::flag(std::string_view name) const {
  return value(name, OptionType::Bool) == "true";
}

int64_t PassOptions::integer(std::string_view name) const {
  const std::string &text = value(name, OptionType::Int);
  int64_t parsed = 0;
  std::from_chars(text.data(), text.data() + text.size(), parsed);
  return parsed;
}

const std::string &PassOptions::text(std::string_view name) const {
  return value(name, OptionType::String);
}

bool PassOptions::isSet(std::string_view name) const {
  return given_.count(name) != 0;
}

RawPassOptions PassOptions::given() const {
  RawPassOptions out;
  for (const std::string &name : given_)
    out[name] = values_.find(name)->second;
  return out;
}

PassTimingScope::PassTimingScope(Module &module, std::string_view name)
    : timing_(module.timing) {
  if (!timing_)
    return;
  entry_ = timing_->entries.size();
  timing_->entries.push_back({std::string(name), timing_->depth, 0});
  ++timing_->depth;
  start_ = std::chrono::steady_clock::now();
}

PassTimingScope::~PassTimingScope() {
  if (!timing_)
    return;
  timing_->entries[entry_].seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  --timing_->depth;
}

std::string formatPassTiming(const PassTiming &timing) {
  double total = 0;
  for (const PassTiming::Entry &entry : timing.entries)
    if (entry.depth == 0)
      total += entry.seconds;
  const char *rule = "===-----------------------------------------------------"
                     "--------------------===\n";
  std::string out = rule;
  out += "                         ... Execution time report ...\n";
  out += rule;
  char line[160];
  std::snprintf(line, sizeof line, "  Total Execution Time: %.4f seconds\n\n",
                total);
  out += line;
  out += "  ----Wall Time----  ----Name----\n";
  for (const PassTiming::Entry &entry : timing.entries) {
    double share = total > 0 ? 100.0 * entry.seconds / total : 0.0;
    std::snprintf(line, sizeof line, "  %8.4f (%5.1f%%)  %*s%s\n",
                  entry.seconds, share, 2 * entry.depth, "",
                  entry.flag.c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "  %8.4f (100.0%%)  Total\n", total);
  out += line;
  return out;
}

Result<RawPassOptions> parsePassOptions(std::string_view text) {
  RawPassOptions options;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ','))
      ++i;
    if (i >= text.size())
      break;
    size_t key_start = i;
    while (i < text.size() && text[i] != '=' && text[i] != ' ')
      ++i;
    std::string key(text.substr(key_start, i - key_start));
    std::string value = "true";
    if (i < text.size() && text[i] == '=') {
      ++i;
      value.clear();
      char quote = 0;
      while (i < text.size() && (quote || text[i] != ' ')) {
        char c = text[i++];
        if (quote && c == quote)
          quote = 0;
        else if (!quote && (c == '\'' || c == '"'))
          quote = c;
        else
          value += c;
      }
      if (quote)
        return makeError("unbalanced quote in pass options: " +
                         std::string(text));
    }
    options[key] = value;
  }
  return options;
}

namespace {

// `text` broken at spaces into lines of at most `width`, each indented.
std::string wrapped(std::string_view text, size_t width,
                    std::string_view indent) {
  std::string out, line;
  size_t start = 0;
  while (start < text.size()) {
    size_t space = text.find(' ', start);
    if (space == std::string_view::npos)
      space = text.size();
    std::string_view word = text.substr(start, space - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += std::string(indent) + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
    start = space + 1;
  }
  if (!line.empty())
    out += std::string(indent) + line + "\n";
  return out;
}

std::string optionLine(const OptionDecl &option) {
  std::string line = "  " + std::string(option.name) + "=<" +
                     std::string(typeName(option.type)) + ">";
  if (!option.choices.empty())
    line += " (" + std::string(option.choices) + ")";
  line +=
      ", default " +
      std::string(option.default_value.empty() ? "\"\"" : option.default_value);
  return line + "\n" + wrapped(option.help, 72, "      ");
}

} // namespace

std::string passHelp(const PassInfo &pass) {
  std::string out = "-" + std::string(pass.flag) + " (" +
                    std::string(pass.stage) +
                    "): " + std::string(pass.summary) + "\n";
  if (!pass.run)
    out += "  Not implemented yet in shardlab.\n";
  if (!pass.description.empty())
    out += "\n" + wrapped(pass.description, 76, "");
  out += pass.options.empty() ? "\nNo options.\n" : "\nOptions:\n";
  for (const OptionDecl &option : pass.options)
    out += optionLine(option);
  return out;
}

namespace {

// `a`, `b`, `c`: a '|' would end the Markdown table cell.
std::string markdownChoices(std::string_view choices) {
  std::string out = "`";
  for (char c : choices)
    out += c == '|' ? std::string("`, `") : std::string(1, c);
  return out + "`";
}

} // namespace

std::string passesMarkdown() {
  std::string out =
      "<!-- Generated by `shardlab-opt --passes-markdown` from the pass "
      "declarations in core/src/passes/*/*_passes.cpp. Do not edit; CI "
      "fails when it is stale. -->\n\n# Passes\n\n"
      "Every pass and pipeline `shardlab-opt` runs, by stage, with its "
      "options. Options are written as in Shardy's `sdy_opt`: "
      "`-pass=\"name=value other\"` (a bare name is `true`).\n";
  for (std::string_view stage : kPassStages) {
    out += "\n## " + std::string(stage) + "\n";
    for (const PassInfo &pass : allPasses()) {
      if (pass.stage != stage)
        continue;
      out += "\n### `-" + std::string(pass.flag) + "`\n\n" +
             std::string(pass.summary) + "." +
             (pass.run ? "" : " *Not implemented yet.*") + "\n";
      if (!pass.description.empty())
        out += "\n" + std::string(pass.description) + "\n";
      if (pass.options.empty())
        continue;
      out += "\n| option | type | default | meaning |\n|---|---|---|---|\n";
      for (const OptionDecl &option : pass.options) {
        std::string type(typeName(option.type));
        if (!option.choices.empty())
          type += ": " + markdownChoices(option.choices);
        out += "| `" + std::string(option.name) + "` | " + type + " | `" +
               std::string(option.default_value) + "` | " +
               std::string(option.help) + " |\n";
      }
    }
  }
  return out;
}

} // namespace shardlab
