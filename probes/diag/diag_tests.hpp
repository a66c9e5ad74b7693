// The diagnostic tests behind diagnostics.cpp's table, and what they share. Internal to probes/.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "probes/diag/diagnostics.hpp"
#include "telemetry/program.hpp"

namespace npukit::probes::diag {

// Records one device's (or the node's, device -1) verdict in `out`.
void add(DiagTestResult& out, int device, Verdict v, std::vector<std::string> reasons = {}, std::string measured = "");

// The devices an active test may run on: none when it cannot run at all (every device is then
// UNKNOWN: no client, stale node, no reference), and never a chip another process holds (WARN:
// a test program would compete with it, and the memory test could starve it of memory).
std::vector<int> runnable(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
// Chips that processes hold in the run's first snapshot.
std::vector<int> held_devices(const telemetry::Snapshot& s);

// Measured against a healthy reference: PASS at >= 90%, WARN at >= 75%, else FAIL.
inline constexpr double kPassRatio = 0.90;
inline constexpr double kWarnRatio = 0.75;
Verdict grade_ratio(double ratio);
// "25.1 GB/s, expected 25.6 GB/s (98%)" for a rate in `unit` (value and reference scaled alike;
// the percentage rounded, but never up to a threshold the figure is below).
std::string versus(double value, double reference, const char* unit);

double median(std::vector<double> v);

// The compute load of Compute and Targeted Stress: kMatmulsPerStep fp16 [N, N] x [N, N] matmuls
// per step, N large enough to reach the cube's rate.
inline constexpr int64_t kMatmulN = 8192;
inline constexpr int kMatmulsPerStep = 10;
inline constexpr double kMatmulStepFlops = 2.0 * kMatmulN * kMatmulN * kMatmulN * kMatmulsPerStep;
std::vector<telemetry::ProgramOp> matmul_step();
// A program of one rank on `device` with one stream (direct allocator).
telemetry::Program single_rank(const std::string& name, int device, int64_t repeat);
// A reference figure, or nullopt when the node did not give it.
std::optional<double> reference(const DiagContext& ctx, const char* key);

// Level 1 (diagnostics.cpp).
void node_reachable(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
void device_count(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
void device_specs(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
void processes(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
void health(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
// Level 2 (diag_active.cpp).
void memory_pattern(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
void pcie_bandwidth(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
void hccs_bandwidth(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
void compute(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
void memory_bandwidth(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);
// Level 3 (diag_stress.cpp).
void targeted_stress(const DiagContext& ctx, std::span<const int> devices, DiagTestResult& out);

}  // namespace npukit::probes::diag
