// Level 2 diagnostics: test programs submitted to the node, every selected device at once
// (diagnostics.hpp has the list and the grading).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

#include "probes/diag/diag_jobs.hpp"
#include "probes/diag/diag_tests.hpp"
#include "probes/health/incidents.hpp"
#include "workloads/program_ops.hpp"

namespace npukit::probes::diag {

namespace tf = telemetry;
namespace fid = telemetry::fid;
using Kind = tf::ProgramOp::Kind;

namespace {

constexpr int64_t kComputeSteps = 16;  // ~0.56 s: DVFS (every 100 ms) settles in the first half
constexpr uint64_t kHbmCopyBytes = 1ull << 30;
constexpr int kHbmCopiesPerStep = 4;
constexpr uint64_t kPcieBytes = 256ull << 20;
constexpr uint64_t kLinkBytes = 256ull << 20;
constexpr int64_t kBandwidthSteps = 3;
constexpr uint64_t kPageBytes = 2ull << 20;            // the HBM page ECC isolates
constexpr uint64_t kMemTestHeadroom = 64ull << 20;     // left free for the runtime itself
constexpr uint64_t kMemTestPatterns = 4;               // 0x00.., 0xFF.., 0x55.., 0xAA..

double gib(double bytes) { return bytes / double(1ull << 30); }

// One program per device, all at once; outcomes in `devices` order.
std::vector<JobOutcome> on_each(const DiagContext& ctx, std::span<const int> devices,
                                const std::function<tf::Program(int)>& make, double virtual_seconds) {
  std::vector<tf::Program> programs;
  for (int d : devices) programs.push_back(make(d));
  return run_jobs(*ctx.client, programs, deadline_for(ctx.snapshot, virtual_seconds), {}, ctx.interrupted);
}

// Units per second over the median step of the second half of the steps (the first half is
// warm-up: clocks settle, caches fill).
double rate(const JobOutcome& o, double units_per_step) {
  std::vector<double> steps = o.step_ms;
  steps.erase(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2));
  double ms = median(steps);
  return ms > 0 ? units_per_step / (ms / 1e3) : 0;
}

// Grades a measured rate against a reference; the reason when not PASS goes to `why`.
Verdict judge(double value, double ref, const char* unit, double scale, const std::string& what,
              std::vector<std::string>& why, std::string& measured) {
  std::string text = versus(value / scale, ref / scale, unit);
  measured += (measured.empty() ? "" : "; ") + what + text;
  Verdict v = grade_ratio(ref > 0 ? value / ref : 0);
  if (v != Verdict::kPass) why.push_back(what + text + (v == Verdict::kFail ? ", below 75%" : ", below 90%"));
  return v;
}

// What may explain a low rate on a device (compute: a power limit at work), given its job.
using Explain = std::function<void(int device, const JobOutcome& job, Verdict& v, std::vector<std::string>& why)>;

// One verdict per device: FAIL with `failed` + the job's error, else its rate against `ref`.
void grade_rates(std::span<const int> devices, const std::vector<JobOutcome>& outcomes, double units_per_step,
                 double ref, const char* unit, double scale, const std::string& what, const std::string& failed,
                 DiagTestResult& out, const Explain& explain = {}) {
  for (std::size_t k = 0; k < devices.size(); ++k) {
    if (!outcomes[k].ok) {
      add(out, devices[k], Verdict::kFail, {failed + outcomes[k].error});
      continue;
    }
    std::vector<std::string> why;
    std::string measured;
    Verdict v = judge(rate(outcomes[k], units_per_step), ref, unit, scale, what, why, measured);
    if (v != Verdict::kPass && explain) explain(devices[k], outcomes[k], v, why);
    add(out, devices[k], v, std::move(why), std::move(measured));
  }
}

// A power limit that held the clock during the test (the job's accounting says for how long) is
// the operator's setting, not a fault (health: "a power cap at work is not a fault"; level 3:
// WARN): a low compute rate under it WARNs, naming the limit, instead of FAILing.
Explain power_limit_explains(const tf::Snapshot& s) {
  return [&s](int d, const JobOutcome& job, Verdict& v, std::vector<std::string>& why) {
    const nlohmann::json* a = job.account_of(d);
    if (a == nullptr || !a->contains("throttled_s") || !(*a)["throttled_s"].is_object()) return;
    if ((*a)["throttled_s"].value("power_cap", 0.0) <= 0) return;
    double limit = s.device(d, fid::kPowerLimitWatts).number().value_or(0);
    char text[96];
    std::snprintf(text, sizeof text, "the power limit (%.0f W) held the clock: ", limit);
    for (std::string& w : why) w = text + w;
    v = Verdict::kWarn;
  };
}

// The chip's own incidents (npu-smi health) are the likely cause of a low rate on it: a chip
// that lost a quarter of its AI Cores measures about 75% of its compute, and the reason names
// that incident instead of leaving the reader to match two tests. Link and memory incidents do
// not slow a chip's own matmuls or copies; they are not named.
Explain chip_incidents_explain(const tf::Snapshot& s) {
  return [incidents = node_incidents(s)](int d, const JobOutcome&, Verdict&, std::vector<std::string>& why) {
    for (const Incident& i : incidents) {
      if (i.device != d || !i.link_kind.empty() || i.kind->entity != tf::IncidentEntity::kChip) continue;
      for (std::string& w : why) w += "; health: " + i.message;
    }
  };
}

// Both explanations, in turn.
Explain both(Explain first, Explain second) {
  return [first = std::move(first), second = std::move(second)](int d, const JobOutcome& job, Verdict& v,
                                                                 std::vector<std::string>& why) {
    first(d, job, v, why);
    second(d, job, v, why);
  };
}

uint64_t ecc_single_bit(const tf::Snapshot& s, int d) {
  return s.device(d, fid::kEccSingleBitVolatile).number().value_or(0);
}

bool hbm_layout(const tf::Snapshot& s, int d) { return s.device_info(d).has_hbm(); }

}  // namespace

std::vector<tf::ProgramOp> matmul_step() {
  return std::vector<tf::ProgramOp>(kMatmulsPerStep, work::matmul_op(kMatmulN, kMatmulN, kMatmulN, "float16"));
}

tf::Program single_rank(const std::string& name, int device, int64_t repeat) {
  tf::Program p;
  p.name = name;
  p.allocator = "direct";
  p.repeat = repeat;
  tf::RankProgram r;
  r.device = device;
  p.ranks.push_back(r);
  return p;
}

void memory_pattern(const DiagContext& ctx, std::span<const int> selected, DiagTestResult& out) {
  std::vector<int> devices = runnable(ctx, selected, out);
  if (devices.empty()) return;
  const tf::Snapshot& s = ctx.snapshot;
  std::vector<uint64_t> bytes;
  for (int d : devices) {
    bool hbm = hbm_layout(s, d);
    double total = s.device(d, hbm ? fid::kHbmTotalBytes : fid::kDdrTotalBytes).number().value_or(0);
    double used = s.device(d, hbm ? fid::kHbmUsedBytes : fid::kDdrUsedBytes).number().value_or(total);
    double free = total - used - static_cast<double>(kMemTestHeadroom);
    bytes.push_back(free > 0 ? static_cast<uint64_t>(free) / kPageBytes * kPageBytes : 0);
  }
  double largest = static_cast<double>(*std::max_element(bytes.begin(), bytes.end()));
  double hbm_rate = reference(ctx, "hbm_bytes_per_s").value_or(1e12);
  std::size_t i = 0;
  auto outcomes = on_each(ctx, devices, [&](int d) {
    tf::Program p = single_rank("diag-memory-pattern", d, 1);
    uint64_t b = std::max<uint64_t>(bytes[i++], kPageBytes);
    p.ranks[0].setup = {work::buffer_op(Kind::kAlloc, "hbm", b)};
    p.ranks[0].step = {work::buffer_op(Kind::kMemTest, "hbm", kMemTestPatterns)};
    return p;
  }, 2.0 * kMemTestPatterns * largest / hbm_rate);
  auto after = ctx.client->snapshot();
  for (std::size_t k = 0; k < devices.size(); ++k) {
    int d = devices[k];
    const JobOutcome& o = outcomes[k];
    char tested[96];
    std::snprintf(tested, sizeof tested, "%.1f GiB x %llu patterns", gib(static_cast<double>(bytes[k])),
                  static_cast<unsigned long long>(kMemTestPatterns));
    if (bytes[k] == 0) {
      add(out, d, Verdict::kWarn, {"no free memory to test (processes hold it)"});
    } else if (!o.ok) {
      add(out, d, Verdict::kFail, {"the pattern test did not run: " + o.error});
    } else if (!o.findings.empty()) {
      std::vector<std::string> why;
      for (const auto& f : o.findings) why.push_back(f.value("text", std::string("bad page")) + " (isolation pending a reset)");
      add(out, d, Verdict::kFail, std::move(why),
          std::string(tested) + ": " + std::to_string(o.findings.size()) + " bad page(s)");
    } else {
      // The job's own count (its accounting); bus snapshots only where the node kept none.
      uint64_t before = ecc_single_bit(s, d), now = after.ok() ? ecc_single_bit(*after, d) : before;
      uint64_t during = o.counted(d, "ecc_single_bit").value_or(now > before ? now - before : 0);
      if (during > 0) {
        add(out, d, Verdict::kWarn, {std::to_string(during) + " correctable ECC error(s) during the test"},
            std::string(tested) + ": no bad pages");
      } else {
        add(out, d, Verdict::kPass, {}, std::string(tested) + ": no bad pages");
      }
    }
  }
}

void pcie_bandwidth(const DiagContext& ctx, std::span<const int> selected, DiagTestResult& out) {
  std::vector<int> devices = runnable(ctx, selected, out);
  if (devices.empty()) return;
  double ref = reference(ctx, "pcie_bytes_per_s").value_or(0);
  double seconds = kBandwidthSteps * static_cast<double>(kPcieBytes) / std::max(ref, 1e9);
  std::vector<std::vector<JobOutcome>> directions;
  for (const char* kind : {"H2D", "D2H"}) {
    directions.push_back(on_each(ctx, devices, [&](int d) {
      tf::Program p = single_rank(std::string("diag-pcie-") + kind, d, kBandwidthSteps);
      p.ranks[0].step = {work::memcpy_op(kind, kPcieBytes)};
      return p;
    }, seconds));
  }
  for (std::size_t k = 0; k < devices.size(); ++k) {
    Verdict v = Verdict::kPass;
    std::vector<std::string> why;
    std::string measured;
    for (std::size_t dir = 0; dir < directions.size(); ++dir) {
      const JobOutcome& o = directions[dir][k];
      std::string what = dir == 0 ? "H2D " : "D2H ";
      if (!o.ok) {
        v = worst(v, Verdict::kFail);
        why.push_back(what + "copy failed: " + o.error);
        continue;
      }
      v = worst(v, judge(rate(o, static_cast<double>(kPcieBytes)), ref, "GB/s", 1e9, what, why, measured));
    }
    add(out, devices[k], v, std::move(why), std::move(measured));
  }
}

namespace {

struct LinkPair {
  int a = 0, b = 0;        // device indexes, a < b
  double peak = 0;         // bytes/s per direction (the slower direction's)
  double rate = 0;         // measured bytes/s per direction
  Verdict verdict = Verdict::kPass;
  std::string text;        // measured, or why it failed
  bool via_switch = false;  // through both chips' ports into the node's switch
};

bool is_hccs(const std::string& kind) {
  std::string k = kind;
  for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k == "hccs";
}

// The HCCS links with an end in `devices`, one per chip pair; pairs with a busy end are left out.
std::vector<LinkPair> hccs_pairs(const tf::Snapshot& s, std::span<const int> devices, const std::vector<int>& busy) {
  std::set<int> chosen(devices.begin(), devices.end());
  std::set<int> in_use(busy.begin(), busy.end());
  std::vector<LinkPair> pairs;
  for (int link = 0; link < s.link_count(); ++link) {
    const tf::LinkInfo& l = s.link_info(link);
    if (!is_hccs(l.kind) || l.device_a < 0 || l.device_b < 0) continue;
    int a = std::min(l.device_a, l.device_b), b = std::max(l.device_a, l.device_b);
    if ((!chosen.count(a) && !chosen.count(b)) || in_use.count(a) || in_use.count(b)) continue;
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](const LinkPair& p) { return p.a == a && p.b == b; });
    if (it == pairs.end()) pairs.push_back({a, b, l.peak_bytes_per_s, 0, Verdict::kPass, ""});
    else it->peak = std::min(it->peak, l.peak_bytes_per_s);
  }
  return pairs;
}

// A switched node (each chip's HCCS port into the node's switch: an HCCS link with no device at
// its far end, as the 8xA100's NVSwitch): its chips have no links to each other, so each is paired
// with its neighbours in device order (a ring; one pair when there are two chips), each transfer
// crossing both chips' ports. A port is then crossed by two pairs: one that passes clears it.
std::vector<LinkPair> switch_pairs(const tf::Snapshot& s, std::span<const int> devices, const std::vector<int>& busy) {
  std::set<int> chosen(devices.begin(), devices.end());
  std::set<int> in_use(busy.begin(), busy.end());
  std::map<int, double> port;  // device -> its port's rate, the slower direction
  for (int link = 0; link < s.link_count(); ++link) {
    const tf::LinkInfo& l = s.link_info(link);
    const int chip = l.device_a >= 0 ? l.device_a : l.device_b;  // a port: one end is the switch (-1)
    if (!is_hccs(l.kind) || (l.device_a >= 0 && l.device_b >= 0) || in_use.count(chip)) continue;
    auto [it, added] = port.emplace(chip, l.peak_bytes_per_s);
    if (!added) it->second = std::min(it->second, l.peak_bytes_per_s);
  }
  std::vector<int> ring;
  for (const auto& [d, rate] : port) ring.push_back(d);
  std::vector<LinkPair> pairs;
  const std::size_t n = ring.size();
  for (std::size_t i = 0; n >= 2 && i < (n == 2 ? 1 : n); ++i) {
    int a = std::min(ring[i], ring[(i + 1) % n]), b = std::max(ring[i], ring[(i + 1) % n]);
    if (!chosen.count(a) && !chosen.count(b)) continue;
    pairs.push_back({a, b, std::min(port[a], port[b]), 0, Verdict::kPass, "", true});
  }
  return pairs;
}

// Rounds of pairs that share no device, so each round's transfers use disjoint links.
std::vector<std::vector<std::size_t>> rounds_of(const std::vector<LinkPair>& pairs) {
  std::vector<std::vector<std::size_t>> rounds;
  std::vector<bool> placed(pairs.size(), false);
  for (std::size_t left = pairs.size(); left > 0;) {
    std::set<int> busy;
    rounds.emplace_back();
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      if (placed[i] || busy.count(pairs[i].a) || busy.count(pairs[i].b)) continue;
      busy.insert({pairs[i].a, pairs[i].b});
      rounds.back().push_back(i);
      placed[i] = true;
      --left;
    }
  }
  return rounds;
}

// Device a sends kLinkBytes to b, then b sends them back, on one communicator of the two.
tf::Program exchange(const LinkPair& p) {
  tf::Program prog;
  prog.name = "diag-hccs-" + std::to_string(p.a) + "-" + std::to_string(p.b);
  prog.repeat = kBandwidthSteps;
  prog.comms = {{"pair", "auto", {}}};
  uint64_t count = kLinkBytes / 2;  // float16
  for (int rank = 0; rank < 2; ++rank) {
    tf::RankProgram r;
    r.device = rank == 0 ? p.a : p.b;
    tf::ProgramOp send = work::p2p_op("Send", count, "float16", 1 - rank);
    tf::ProgramOp recv = work::p2p_op("Recv", count, "float16", 1 - rank);
    r.step = rank == 0 ? std::vector{send, recv} : std::vector{recv, send};
    prog.ranks.push_back(r);
  }
  return prog;
}

std::string pair_name(const LinkPair& p) {
  return "HCCS " + std::to_string(p.a) + "<->" + std::to_string(p.b) + (p.via_switch ? " via the switch" : "");
}

}  // namespace

void hccs_bandwidth(const DiagContext& ctx, std::span<const int> selected, DiagTestResult& out) {
  std::vector<int> devices = runnable(ctx, selected, out);
  if (devices.empty()) return;
  std::vector<LinkPair> pairs = hccs_pairs(ctx.snapshot, devices, held_devices(ctx.snapshot));
  if (pairs.empty()) pairs = switch_pairs(ctx.snapshot, devices, held_devices(ctx.snapshot));
  double efficiency = reference(ctx, "link_efficiency").value_or(1.0);
  for (const auto& round : rounds_of(pairs)) {
    std::vector<tf::Program> programs;
    double seconds = 0;
    for (std::size_t i : round) {
      programs.push_back(exchange(pairs[i]));
      seconds = std::max(seconds, 2.0 * kBandwidthSteps * kLinkBytes / std::max(pairs[i].peak * efficiency, 1e9));
    }
    auto outcomes = run_jobs(*ctx.client, programs, deadline_for(ctx.snapshot, seconds), {}, ctx.interrupted);
    for (std::size_t k = 0; k < round.size(); ++k) {
      LinkPair& p = pairs[round[k]];
      if (!outcomes[k].ok) {
        p.verdict = Verdict::kFail;
        p.text = "transfer failed: " + outcomes[k].error;
        continue;
      }
      std::vector<std::string> why;
      p.rate = rate(outcomes[k], 2.0 * kLinkBytes);
      p.verdict = judge(p.rate, p.peak * efficiency, "GB/s", 1e9, "", why, p.text);
      if (!why.empty()) p.text = why.front();
    }
  }
  for (int d : devices) {
    Verdict v = Verdict::kPass;
    std::vector<std::string> why;
    int links = 0;
    bool via_switch = false;
    const LinkPair* slowest = nullptr;  // of the links that moved data (see `speaks`)
    bool one_passed = false;
    for (const LinkPair& p : pairs) {
      if (p.a != d && p.b != d) continue;
      ++links;
      via_switch = p.via_switch;
      v = worst(v, p.verdict);
      one_passed = one_passed || p.verdict == Verdict::kPass;
      if (p.verdict != Verdict::kPass) why.push_back(pair_name(p) + ": " + p.text);
      // Through a switch a slow pair is the slower port's, maybe the neighbour's: only a passing
      // pair speaks for this chip's port there. A direct link is the chip's own, failing or not.
      bool speaks = p.rate > 0 && (!p.via_switch || p.verdict == Verdict::kPass);
      if (speaks && (!slowest || p.rate < slowest->rate)) slowest = &p;
    }
    if (via_switch && one_passed) {  // a passing transfer crossed this chip's port: the port is fine
      v = Verdict::kPass;
      why.clear();
    }
    std::string measured = links == 0   ? "no HCCS links in this topology"
                           : via_switch ? "its port into the switch, in " + std::to_string(links) + " pair(s)"
                                        : std::to_string(links) + " link(s)";
    if (links > 0 && slowest) measured += "; slowest " + pair_name(*slowest) + " " + slowest->text;
    add(out, d, v, std::move(why), std::move(measured));
  }
}

void compute(const DiagContext& ctx, std::span<const int> selected, DiagTestResult& out) {
  std::vector<int> devices = runnable(ctx, selected, out);
  if (devices.empty()) return;
  double ref = reference(ctx, "matmul_fp16_flops").value_or(0);
  auto outcomes = on_each(ctx, devices, [&](int d) {
    tf::Program p = single_rank("diag-compute", d, kComputeSteps);
    p.ranks[0].step = matmul_step();
    return p;
  }, kComputeSteps * kMatmulStepFlops / std::max(ref, 1e12));
  grade_rates(devices, outcomes, kMatmulStepFlops, ref, "TFLOPS", 1e12, "fp16 matmul ", "fp16 matmuls failed: ", out,
              both(power_limit_explains(ctx.snapshot), chip_incidents_explain(ctx.snapshot)));
}

void memory_bandwidth(const DiagContext& ctx, std::span<const int> selected, DiagTestResult& out) {
  std::vector<int> devices = runnable(ctx, selected, out);
  if (devices.empty()) return;
  double ref = reference(ctx, "hbm_bytes_per_s").value_or(0);
  double bytes_per_step = 2.0 * kHbmCopyBytes * kHbmCopiesPerStep;  // every copy reads and writes
  auto outcomes = on_each(ctx, devices, [&](int d) {
    tf::Program p = single_rank("diag-memory-bandwidth", d, kBandwidthSteps);
    p.ranks[0].setup = {work::buffer_op(Kind::kAlloc, "src", kHbmCopyBytes), work::buffer_op(Kind::kAlloc, "dst", kHbmCopyBytes)};
    for (int i = 0; i < kHbmCopiesPerStep; ++i) p.ranks[0].step.push_back(work::memcpy_op("D2D", kHbmCopyBytes));
    return p;
  }, kBandwidthSteps * bytes_per_step / std::max(ref, 1e11));
  grade_rates(devices, outcomes, bytes_per_step, ref, "GB/s", 1e9, "copy ", "device-to-device copies failed: ", out,
              chip_incidents_explain(ctx.snapshot));
}

}  // namespace npukit::probes::diag
