// Text tables and the SVG picture of a comparison (see strategy.h).
#include "shardlab/strategy/strategy.h"
#include "strategy/units.h"

#include <algorithm>
#include <cstdio>

namespace shardlab::strategy {
namespace {

std::string collectivesText(const Candidate &row) {
  std::string out;
  for (const CollectiveTotals &t : row.collectives)
    out += (out.empty() ? "" : ", ") + t.kind + " " + std::to_string(t.count) +
           "x " + mibText(t.bytes);
  return out.empty() ? "none" : out;
}

// UTF-8 characters, not bytes ("×" is two bytes, one column).
size_t displayWidth(const std::string &text) {
  size_t columns = 0;
  for (unsigned char c : text)
    columns += (c & 0xC0) != 0x80;
  return columns;
}

std::string padded(std::string text, size_t width) {
  const size_t columns = displayWidth(text);
  if (columns < width)
    text.append(width - columns, ' ');
  return text;
}

std::string xmlEscaped(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

// The name column: room for the longest name (derived rows, such as
// "PP×DP×TP 8×4×2 recompute full mb÷16", are long) and two spaces.
size_t nameWidth(const Comparison &c) {
  size_t width = 22;
  for (const Candidate &row : c.rows)
    width = std::max(width, displayWidth(row.name) + 4);
  return width;
}

std::string rowText(size_t rank, const Candidate &row, size_t width) {
  std::string fits = row.fits ? (*row.fits ? "yes" : "NO") : "?";
  return padded(std::to_string(rank), 4) +
         padded(row.name + (row.is_user ? " *" : ""), width) +
         padded(msText(row.step_time_us), 12) +
         padded(msText(row.compute_us), 12) +
         padded(msText(row.exposed_comm_us), 12) +
         padded(msText(row.hidden_comm_us), 12) +
         padded(gibText(row.peak_memory_bytes), 10) + padded(fits, 6) +
         collectivesText(row) + "\n";
}

// The rows whose collectives no model could cost ("" when none has any).
std::string uncostedText(const Comparison &c) {
  std::string rows;
  for (const Candidate &row : c.rows)
    if (row.ok && row.uncosted_collectives > 0)
      rows += (rows.empty() ? "" : ", ") + row.name + " (" +
              std::to_string(row.uncosted_collectives) + ")";
  if (rows.empty())
    return "";
  return "\nnot estimates: collectives no model could cost, each taking "
         "XLA's 5 ms fallback, in " +
         rows + "\n";
}

// The largest temporaries live at a row's peak, on a line of their own.
std::string largestLiveText(const Candidate &row) {
  if (row.largest_live.empty())
    return "";
  std::string out = "    largest live, while " + row.peak_at + " runs:";
  for (const schedule::NamedBuffer &b : row.largest_live)
    out += " " + b.name + " " + bytesText(b.bytes) + ";";
  out.back() = '\n';
  return out;
}

// Why the fastest row beats the module as written ("" when it does not).
std::string whyText(const Comparison &c) {
  if (c.why_fastest.empty())
    return "";
  std::string out =
      "\nwhy " + c.why_fastest_row + " is faster than the module as written:\n";
  for (const std::string &reason : c.why_fastest)
    out += "  " + reason + "\n";
  return out;
}

} // namespace

std::string comparisonText(const Comparison &c) {
  std::string out = "Sharding strategies on " + std::to_string(c.devices) +
                    " devices (" + std::to_string(c.rows.size()) +
                    " candidates, " + formatNumber("%.0f", c.elapsed_ms) +
                    " ms; * = the module as written)\n\n";
  const size_t width = nameWidth(c);
  out += padded("#", 4) + padded("candidate", width) + padded("step ms", 12) +
         padded("compute", 12) + padded("exposed", 12) + padded("hidden", 12) +
         padded("peak GiB", 10) + padded("fits", 6) + "collectives\n";
  size_t rank = 0;
  for (const Candidate &row : c.rows)
    if (row.ok)
      out += rowText(++rank, row, width);
  out += uncostedText(c) + whyText(c);
  bool over = false;
  for (const Candidate &row : c.rows) {
    if (!row.ok || !row.fits || *row.fits)
      continue;
    if (!over)
      out += "\ndoes not fit (the peak: arguments + what is live then):\n";
    over = true;
    out += "  " + padded(row.name, width - 2) + gibText(row.peak_memory_bytes) +
           " GiB = " + gibText(row.argument_bytes) +
           " GiB of arguments (weights, optimizer state, batch) + " +
           gibText(row.peak_memory_bytes - row.argument_bytes) +
           " GiB live (saved activations, gathered weights, gradients) > " +
           gibText(row.capacity_bytes) + " GiB\n" + largestLiveText(row);
  }
  bool header = false;
  for (const Candidate &row : c.rows) {
    if (row.ok)
      continue;
    if (!header)
      out += "\nnot evaluated:\n";
    header = true;
    out += "  " + padded(row.name, width - 2) + row.error + "\n";
  }
  out += "\narguments:\n";
  for (const ArgInfo &a : c.args) {
    std::string shape;
    for (int64_t d : a.shape)
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
    out += "  " + padded(a.name, 12) +
           padded(shape.empty() ? "scalar" : shape, 20) +
           padded(std::string(toString(a.role)), 11) + a.reason + "\n";
  }
  if (c.pruned_by_bound > 0)
    out += "\n" + std::to_string(c.pruned_by_bound) +
           " layouts were not tried, as the cheap bound rules them out: "
           "recomputed or split layouts that do not fit, whose compute alone "
           "takes longer than the fastest step that fits, and pipelines that "
           "even interleaved (half the bubble) could not beat it\n";
  out += "\nthe shardings of every candidate: --report FILE (JSON)\n";
  return out;
}

std::string suggestionsText(const Suggestions &s) {
  std::string out = "Searched " + std::to_string(s.evaluated) +
                    " strategies in " + formatNumber("%.0f", s.elapsed_ms) +
                    " ms" + (s.budget_exhausted ? " (budget spent)" : "") +
                    "\n";
  if (s.user.ok)
    out += "as written: " + msText(s.user.step_time_us) + " ms per step\n";
  else
    out += "as written: not evaluated (" + s.user.error + ")\n";
  int n = 0;
  for (const Suggestion &g : s.suggestions) {
    out +=
        "\n" + std::to_string(++n) + ". " + g.candidate.name + ": " +
        msText(g.candidate.step_time_us) + " ms" +
        (g.speedup > 0 ? " (" + formatNumber("%.2f", g.speedup) + "x)" : "") +
        "\n   " + g.candidate.description + "\n";
    for (const std::string &change : g.changes)
      out += "   change  " + change + "\n";
    for (const std::string &reason : g.reasons)
      out += "   why     " + reason + "\n";
  }
  return out;
}

std::string comparisonSvg(const Comparison &c) {
  constexpr int kBars = 470, kGap = 20, kMemory = 250;
  // The names' column: 8 px a character at 12 px (digits and "×" are
  // wider than the average letter), at least 150.
  const int kLabel = int(std::max<size_t>(150, 8 * (nameWidth(c) - 4) + 20));
  constexpr int kRow = 26, kTop = 56;
  const int width = kLabel + kBars + kGap + kMemory + 20;
  const int height = kTop + kRow * int(c.rows.size()) + 40;
  double max_us = 1;
  int64_t max_bytes = 1;
  for (const Candidate &row : c.rows)
    if (row.ok) {
      max_us = std::max(max_us, row.compute_us + row.exposed_comm_us);
      max_us = std::max(max_us, row.step_time_us);
      max_bytes =
          std::max({max_bytes, row.peak_memory_bytes, row.capacity_bytes});
    }
  std::string svg =
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
      std::to_string(width) + "\" height=\"" + std::to_string(height) +
      "\" viewBox=\"0 0 " + std::to_string(width) + " " +
      std::to_string(height) +
      "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">"
      "Sharding strategies on " +
      std::to_string(c.devices) +
      " devices</text>\n"
      "<rect x=\"" +
      std::to_string(kLabel) +
      "\" y=\"30\" width=\"10\" height=\"10\" fill=\"#4c78a8\"/>"
      "<text x=\"" +
      std::to_string(kLabel + 14) +
      "\" y=\"39\">compute</text>\n"
      "<rect x=\"" +
      std::to_string(kLabel + 80) +
      "\" y=\"30\" width=\"10\" height=\"10\" fill=\"#e45756\"/>"
      "<text x=\"" +
      std::to_string(kLabel + 94) +
      "\" y=\"39\">exposed communication</text>\n"
      "<text x=\"" +
      std::to_string(kLabel + kBars + kGap) +
      "\" y=\"39\">peak memory per device (| capacity)</text>\n";
  int y = kTop;
  for (const Candidate &row : c.rows) {
    const std::string label = xmlEscaped(row.name + (row.is_user ? " *" : ""));
    svg += "<text x=\"10\" y=\"" + std::to_string(y + 16) + "\"" +
           (row.is_user ? " font-weight=\"bold\"" : "") + ">" + label +
           "</text>\n";
    if (!row.ok) {
      svg += "<text x=\"" + std::to_string(kLabel) + "\" y=\"" +
             std::to_string(y + 16) + "\" fill=\"#888\">" +
             xmlEscaped(row.error.substr(0, 90)) + "</text>\n";
      y += kRow;
      continue;
    }
    const double scale = (kBars - 90) / max_us;
    const int compute = int(row.compute_us * scale + 0.5);
    const int exposed = int(row.exposed_comm_us * scale + 0.5);
    svg += "<rect x=\"" + std::to_string(kLabel) + "\" y=\"" +
           std::to_string(y + 4) + "\" width=\"" + std::to_string(compute) +
           "\" height=\"16\" fill=\"#4c78a8\"><title>compute " +
           msText(row.compute_us) + " ms</title></rect>\n";
    svg += "<rect x=\"" + std::to_string(kLabel + compute) + "\" y=\"" +
           std::to_string(y + 4) + "\" width=\"" + std::to_string(exposed) +
           "\" height=\"16\" fill=\"#e45756\"><title>exposed communication " +
           msText(row.exposed_comm_us) + " ms</title></rect>\n";
    svg += "<text x=\"" + std::to_string(kLabel + compute + exposed + 4) +
           "\" y=\"" + std::to_string(y + 16) + "\">" +
           msText(row.step_time_us) + " ms</text>\n";
    const int mx = kLabel + kBars + kGap;
    const int memory =
        int(double(row.peak_memory_bytes) / double(max_bytes) * (kMemory - 70));
    const bool fits = !row.fits || *row.fits;
    svg += "<rect x=\"" + std::to_string(mx) + "\" y=\"" +
           std::to_string(y + 4) + "\" width=\"" + std::to_string(memory) +
           "\" height=\"16\" fill=\"" + (fits ? "#54a24b" : "#b279a2") +
           "\"><title>" + gibText(row.peak_memory_bytes) +
           " GiB peak</title></rect>\n";
    if (row.capacity_bytes > 0) {
      const int cap = mx + int(double(row.capacity_bytes) / double(max_bytes) *
                               (kMemory - 70));
      svg += "<line x1=\"" + std::to_string(cap) + "\" x2=\"" +
             std::to_string(cap) + "\" y1=\"" + std::to_string(y + 2) +
             "\" y2=\"" + std::to_string(y + 22) +
             "\" stroke=\"black\" stroke-width=\"2\"/>\n";
    }
    svg += "<text x=\"" + std::to_string(mx + kMemory - 62) + "\" y=\"" +
           std::to_string(y + 16) + "\">" + gibText(row.peak_memory_bytes) +
           " GiB</text>\n";
    y += kRow;
  }
  svg +=
      "<text x=\"10\" y=\"" + std::to_string(y + 24) +
      "\" fill=\"#555\">* the module as written. Estimated by shardlab "
      "(propagation, explicit collectives, latency-hiding schedule).</text>\n"
      "</svg>\n";
  return svg;
}

} // namespace shardlab::strategy
