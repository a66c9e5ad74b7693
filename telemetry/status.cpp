#include "telemetry/status.hpp"

namespace npukit {

const char* code_name(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kNotFound: return "NotFound";
    case Code::kShapeInference: return "ShapeInferenceError";
    case Code::kOutOfMemory: return "OutOfMemory";
    case Code::kFailedPrecondition: return "FailedPrecondition";
    case Code::kUnavailable: return "Unavailable";
    case Code::kPermissionDenied: return "PermissionDenied";
    case Code::kInternal: return "Internal";
  }
  return "Unknown";
}

}  // namespace npukit
