// Why one row of a comparison is faster than another (see
// compare_internal.h): the suggestions' "why" lines and the comparison's
// account of its fastest row against the module as written.
#include "strategy/compare_internal.h"
#include "strategy/units.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace shardlab::strategy {
namespace {

const CollectiveTotals *findKind(const Candidate &row,
                                 const std::string &kind) {
  for (const CollectiveTotals &t : row.collectives)
    if (t.kind == kind)
      return &t;
  return nullptr;
}

std::string countText(const CollectiveTotals &t) {
  return std::to_string(t.count) + " x " + mibText(t.bytes);
}

// A kind both rows run: what changed in calls, bytes and time ("" when
// nothing a reader would see did).
std::string changedKind(const std::string &kind, const CollectiveTotals &was,
                        const CollectiveTotals &now) {
  const bool same_calls = was.bytes == now.bytes && was.count == now.count;
  const bool same_exposed =
      std::abs(was.exposed_us - now.exposed_us) < 0.5e-3 * was.exposed_us + 1;
  if (same_calls && same_exposed)
    return "";
  std::string line = kind + ": ";
  line += same_calls ? "the same " + countText(now)
                     : countText(was) + " -> " + countText(now);
  line += " (";
  if (!same_calls)
    line += msWithUnit(was.comm_us) + " -> " + msWithUnit(now.comm_us) + ", ";
  return line + "exposed " + msWithUnit(was.exposed_us) + " -> " +
         msWithUnit(now.exposed_us) + ")";
}

} // namespace

std::vector<std::string> reasons(const Candidate &user, const Candidate &row) {
  std::vector<std::string> out;
  std::set<std::string> kinds;
  for (const Candidate *c : {&user, &row})
    for (const CollectiveTotals &t : c->collectives)
      kinds.insert(t.kind);
  for (const std::string &kind : kinds) {
    const CollectiveTotals *was = findKind(user, kind);
    const CollectiveTotals *now = findKind(row, kind);
    if (was && !now)
      out.push_back(kind + ": " + std::to_string(was->count) + " (" +
                    mibText(was->bytes) + ", " + msWithUnit(was->comm_us) +
                    ", " + msWithUnit(was->exposed_us) +
                    " exposed) no longer needed");
    else if (!was && now)
      out.push_back(kind + ": " + std::to_string(now->count) + " added (" +
                    mibText(now->bytes) + ", " + msWithUnit(now->comm_us) +
                    ", " + msWithUnit(now->exposed_us) + " exposed)");
    else if (std::string line = changedKind(kind, *was, *now); !line.empty())
      out.push_back(std::move(line));
  }
  if (user.compute_us != row.compute_us)
    out.push_back("compute: " + msWithUnit(user.compute_us) + " -> " +
                  msWithUnit(row.compute_us));
  out.push_back("exposed communication: " + msWithUnit(user.exposed_comm_us) +
                " -> " + msWithUnit(row.exposed_comm_us));
  if (row.fits && (row.fits != user.fits ||
                   row.peak_memory_bytes != user.peak_memory_bytes))
    out.push_back("peak memory: " + gibText(user.peak_memory_bytes) + " -> " +
                  gibText(row.peak_memory_bytes) + " GiB of " +
                  gibText(row.capacity_bytes) + " GiB" +
                  (*row.fits ? "" : ": does not fit"));
  return out;
}

const Candidate *fastestRow(const std::vector<Candidate> &rows) {
  const Candidate *fastest = nullptr;
  for (const Candidate &row : rows) {
    if (!row.ok)
      continue;
    if (!row.fits || *row.fits)
      return &row;
    if (!fastest)
      fastest = &row;
  }
  return fastest;
}

std::vector<std::string> whyFastest(const std::vector<Candidate> &rows,
                                    const Candidate *fastest) {
  const auto user = std::find_if(rows.begin(), rows.end(),
                                 [](const Candidate &r) { return r.is_user; });
  if (user == rows.end() || !user->ok || !fastest || fastest == &*user)
    return {};
  return reasons(*user, *fastest);
}

} // namespace shardlab::strategy
