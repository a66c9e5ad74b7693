// `npu-smi info -t <type> -i N [-c C]` and `info -t phyid-remap -p P`: the key/value types.
// Each type builds one Document (chip keys in npu-smi's order); render_type_text() prints it as
// npu-smi does ("\t%-30s : value", ECC keys 40 wide, proc-mem's process lines, phyid-remap's
// "key:value"), render_json() prints the same document for --json.
//
// Forms, as npu-smi takes them:
//   -i N        all chips of card N: "NPU ID", "Chip Count", then one block per chip (a blank
//               line before each); `usages` ends each block with "Chip ID", the others start it;
//   -i N -c C   one chip, no header;
//   board -i N  the card's board info (one block).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "smi/common/doc.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::smi {

// The -t types this npu-smi answers (the rest of npu-smi's list are "Error parameter of -t").
std::span<const std::string_view> info_types();
bool is_info_type(std::string_view type);
// The -t types of `set` and `clear` this npu-smi answers.
std::span<const std::string_view> set_types();
std::span<const std::string_view> clear_types();
// Types that take no -i (answered for the whole node).
bool is_node_type(std::string_view type);

struct TypeQuery {
  std::string type;
  int npu = -1;                 // -i
  std::optional<int> chip;      // -c
  std::optional<int> phy;       // -p (phyid-remap)
};

// The devices of card `npu`, in chip order (empty when the card does not exist).
std::vector<int> devices_of_card(const telemetry::Snapshot& s, int npu);
// The device with this card/chip, or -1.
int device_of(const telemetry::Snapshot& s, int npu, int chip);

struct TypeDoc {
  Document doc;
  // Set when this chip does not support the type: npu-smi prints
  // "This device does not support querying <type>." and exits 0.
  bool unsupported = false;
};

// The document of one query; the ids were validated by the caller.
TypeDoc build_type_doc(const telemetry::Snapshot& s, const TypeQuery& q);
std::string render_type_text(const TypeQuery& q, const Document& doc);

}  // namespace npukit::smi
