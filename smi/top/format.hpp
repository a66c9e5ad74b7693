// Text for npu-top's values. "No value" is never 0: a sample whose status is not ok is shown
// as "NA" when the device does not support the field and "-" when there is no value right now
// (never published, or the node is stale).
//
// Labels come from the field registry (telemetry/fields.hpp): field_label() is the registry's
// label, cut to the width available: the whole label when it fits, else the label without its
// "(unit)" suffix (used when the values carry their own unit), else truncated.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "telemetry/fields.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::top {

// "NA" (not supported) or "-" (anything else that is not ok).
const char* missing_text(telemetry::SampleStatus status);

// The registry label of `id` fitted to `width` cells (see above). `unit_in_values`: prefer the
// label without its unit even when the whole label fits.
std::string field_label(telemetry::FieldId id, int width, bool unit_in_values = true);

std::string format_percent(const telemetry::Sample& s);                   // "42%"
std::string format_celsius(const telemetry::Sample& s);                   // "56C"
std::string format_mhz(const telemetry::Sample& s);                       // "1800MHz"
std::string format_watts(const telemetry::Sample& used, const telemetry::Sample& limit);  // "245/400W"
std::string format_memory(const telemetry::Sample& used, const telemetry::Sample& total);  // "12.3/64.0G"
std::string format_bytes(uint64_t bytes);   // "512M", "12.3G"
std::string format_mib(uint64_t bytes);     // whole MiB, as npu-smi prints process memory
// A count in at most 5 characters: exact below 10,000, then "12.3k", "123k", "73.3M" (with
// `decimals` false "12k", "73M"), rounded down so a count never reads higher than it is.
std::string format_count(uint64_t n, bool decimals = true);
// "thermal", "power", "fault" joined with '+'; "" when no bit is set.
std::string throttle_text(uint64_t reasons);
std::string format_uptime(uint64_t ns);     // "2d 03:04:05", "03:04:05"
std::string format_interval(double seconds);  // "0.2s", "1s", "2.5s"
std::string format_window(uint64_t ns);     // "30s", "1m", "15m", "1h"

// A fraction in [0, 1] of used/total, when both have values and total > 0.
std::optional<double> fraction(const telemetry::Sample& used, const telemetry::Sample& total);

}  // namespace npukit::top
