// Level 3: Targeted Stress with a thermal watch (diagnostics.hpp).
//
// Every selected device runs fp16 matmuls for DiagOptions::stress_seconds of the node's virtual
// time while the bus is sampled after every poll. A device FAILs when its clock was pulled down
// for heat, when its sustained throughput fell by 10% or more (last quarter of the steps against
// the first), on an uncorrectable ECC error, or when the job failed; it WARNs when the power
// limit held its clock, when it peaked within 5 C of its throttle point, or on correctable ECC
// errors.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "probes/diag/diag_jobs.hpp"
#include "probes/diag/diag_tests.hpp"

namespace npukit::probes::diag {

namespace tf = telemetry;
namespace fid = telemetry::fid;

namespace {

constexpr double kThrottleMarginC = 5;    // WARN when the peak comes this close to the throttle point
constexpr double kSustainedDrop = 0.10;   // FAIL when throughput falls this much
constexpr double kNoClock = 1e12;         // no busy sample: the clock is unknown

// What the watch saw on one device.
struct Watch {
  double peak_c = 0;
  double peak_w = 0;
  double min_clock = kNoClock;  // the lowest clock seen while busy
  uint64_t reasons = 0;  // every throttle reason seen
  double power_limit_w = 0;
  uint64_t sbe_start = 0, dbe_start = 0, sbe_end = 0, dbe_end = 0;
};

double field(const tf::Snapshot& s, int d, tf::FieldId id, double fallback = 0) {
  return s.device(d, id).number().value_or(fallback);
}

void sample(const tf::Snapshot& s, std::span<const int> devices, std::vector<Watch>& w) {
  if (s.stale()) return;
  for (std::size_t k = 0; k < devices.size(); ++k) {
    int d = devices[k];
    w[k].peak_c = std::max(w[k].peak_c, field(s, d, fid::kTemperatureCelsius));
    w[k].peak_w = std::max(w[k].peak_w, field(s, d, fid::kPowerWatts));
    // The clock counts while the chip works: an idle chip reports its idle clock (a sample before
    // the stress starts or after it ends read 800 MHz on a 910B2 and was taken for throttling).
    if (field(s, d, fid::kAicoreUtil) > 0) {
      w[k].min_clock = std::min(w[k].min_clock, field(s, d, fid::kAicoreClockMhz, w[k].min_clock));
    }
    w[k].reasons |= s.device(d, fid::kThrottleReasons).number().has_value()
                        ? static_cast<uint64_t>(field(s, d, fid::kThrottleReasons)) : 0;
    w[k].power_limit_w = field(s, d, fid::kPowerLimitWatts, w[k].power_limit_w);
    w[k].sbe_end = static_cast<uint64_t>(field(s, d, fid::kEccSingleBitTotal));
    w[k].dbe_end = static_cast<uint64_t>(field(s, d, fid::kEccDoubleBitTotal));
  }
}

// Mean TFLOPS over steps [from, to).
double tflops(const std::vector<double>& step_ms, std::size_t from, std::size_t to, double flops) {
  double ms = 0;
  for (std::size_t i = from; i < to; ++i) ms += step_ms[i];
  return ms > 0 ? flops * static_cast<double>(to - from) / (ms / 1e3) / 1e12 : 0;
}

std::string text(const char* fmt, double a, double b = 0, double c = 0) {
  char buf[200];
  std::snprintf(buf, sizeof buf, fmt, a, b, c);
  return buf;
}

// What the node accounted for the stress job on device `d` (its whole run, not the watch's
// samples, which a fast node can take before the job starts and after it ends): its ECC errors,
// its hottest sample and its mean power.
void take_accounting(Watch& w, const JobOutcome& o, int d) {
  const nlohmann::json* a = o.account_of(d);
  if (a == nullptr) return;
  if (auto n = o.counted(d, "ecc_single_bit")) w.sbe_end = w.sbe_start + *n;
  if (auto n = o.counted(d, "ecc_double_bit")) w.dbe_end = w.dbe_start + *n;
  w.peak_c = std::max(w.peak_c, a->value("temperature_max_c", 0.0));
  double seconds = o.accounting.value("duration_s", 0.0);
  if (seconds > 0) w.peak_w = std::max(w.peak_w, a->value("energy_j", 0.0) / seconds);
}

void judge(Watch w, const JobOutcome& o, double throttle_c, double flops, double seconds, int d,
           DiagTestResult& out) {
  take_accounting(w, o, d);
  std::vector<std::string> why;
  Verdict v = Verdict::kPass;
  auto flag = [&](Verdict level, std::string reason) {
    v = worst(v, level);
    why.push_back(std::move(reason));
  };
  if (!o.ok) flag(Verdict::kFail, "the stress job failed: " + o.error);
  if (w.reasons & tf::kThrottleThermal) {
    flag(Verdict::kFail, text("thermal throttling: the clock fell to %.0f MHz with the chip at %.0f C (throttle point %.0f C)",
                              w.min_clock, w.peak_c, throttle_c));
  } else if (w.peak_c >= throttle_c - kThrottleMarginC) {
    flag(Verdict::kWarn, text("peak chip temperature %.0f C is within %.0f C of the throttle point %.0f C", w.peak_c,
                              kThrottleMarginC, throttle_c));
  }
  if (w.reasons & tf::kThrottlePowerLimit) {
    flag(Verdict::kWarn, text("the power limit (%.0f W) held the clock at %.0f MHz", w.power_limit_w, w.min_clock));
  }
  if (w.dbe_end > w.dbe_start) {
    flag(Verdict::kFail, std::to_string(w.dbe_end - w.dbe_start) + " uncorrectable ECC error(s) during the stress");
  }
  if (w.sbe_end > w.sbe_start) {
    flag(Verdict::kWarn, std::to_string(w.sbe_end - w.sbe_start) + " correctable ECC error(s) during the stress");
  }
  std::string measured = w.min_clock < kNoClock
                             ? text("peak %.0f C, %.0f W, clock >= %.0f MHz", w.peak_c, w.peak_w, w.min_clock)
                             : text("peak %.0f C, %.0f W, clock NA (never seen busy)", w.peak_c, w.peak_w);
  std::size_t n = o.step_ms.size();
  if (n >= 4) {
    double first = tflops(o.step_ms, 0, n / 4, flops), last = tflops(o.step_ms, n - n / 4, n, flops);
    measured += text(", %.1f TFLOPS at the start, %.1f at the end of %.0f s", first, last, seconds);
    if (last < first * (1 - kSustainedDrop)) {
      flag(Verdict::kFail, text("sustained throughput fell %.0f%% (%.1f to %.1f TFLOPS)", 100 * (1 - last / first), first, last));
    }
  }
  add(out, d, v, std::move(why), std::move(measured));
}

}  // namespace

void targeted_stress(const DiagContext& ctx, std::span<const int> selected, DiagTestResult& out) {
  std::vector<int> devices = runnable(ctx, selected, out);
  if (devices.empty()) return;
  double ref = reference(ctx, "matmul_fp16_flops").value_or(3e14);
  double flops = kMatmulStepFlops;
  double seconds = std::max(1.0, ctx.options.stress_seconds);
  auto steps = static_cast<int64_t>(std::ceil(seconds / (flops / ref)));
  std::vector<tf::Program> programs;
  for (int d : devices) {
    programs.push_back(single_rank("diag-stress", d, steps));
    programs.back().ranks[0].step = matmul_step();
  }
  std::vector<Watch> watch(devices.size());
  for (std::size_t k = 0; k < devices.size(); ++k) {
    watch[k].sbe_start = static_cast<uint64_t>(field(ctx.snapshot, devices[k], fid::kEccSingleBitTotal));
    watch[k].dbe_start = static_cast<uint64_t>(field(ctx.snapshot, devices[k], fid::kEccDoubleBitTotal));
    watch[k].sbe_end = watch[k].sbe_start;
    watch[k].dbe_end = watch[k].dbe_start;
  }
  auto outcomes = run_jobs(*ctx.client, programs, deadline_for(ctx.snapshot, seconds * 1.5), [&] {
    auto s = ctx.client->snapshot();
    if (s.ok()) sample(*s, devices, watch);
  }, ctx.interrupted);
  for (std::size_t k = 0; k < devices.size(); ++k) {
    double throttle_c = thresholds_for(ctx.snapshot.device_info(devices[k])).temperature_warn_c;
    judge(watch[k], outcomes[k], throttle_c, flops, seconds, devices[k], out);
  }
}

}  // namespace npukit::probes::diag
