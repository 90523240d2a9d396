// ModelPart: which method each part of ModelState belongs to.
#include "classify/model/model_state.h"

#include <string>

namespace autocat::internal {

bool model_part_of(Method method, ModelPart* part) {
  if (method == Method::kKnn || method == Method::kCombo ||
      static_cast<size_t>(method) >= all_methods().size()) {
    return false;
  }
  *part = ModelPart(static_cast<uint32_t>(method) - 1);
  return true;
}

std::string model_part_name(ModelPart part) {
  return method_name(Method(static_cast<uint32_t>(part) + 1));
}

}  // namespace autocat::internal
