// ModelPart: which method each part of ModelState belongs to, read from the
// method table (classify/base/method_traits.h).
#include "classify/model/model_state.h"

#include <string>

#include "classify/base/method_traits.h"

namespace autocat::internal {

bool model_part_of(Method method, ModelPart* part) {
  const MethodTraits* traits = find_method_traits(method);
  if (traits == nullptr || traits->model_part == kNoModelPart) return false;
  *part = static_cast<ModelPart>(traits->model_part);
  return true;
}

std::string model_part_name(ModelPart part) {
  for (const MethodTraits& traits : method_table()) {
    if (traits.model_part == static_cast<int32_t>(part)) return traits.name;
  }
  return "unknown";
}

}  // namespace autocat::internal
