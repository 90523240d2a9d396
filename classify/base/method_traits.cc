// The method table, and the public method names read from it.
#include "classify/base/method_traits.h"

#include <string>

#include "autocat/error.h"

namespace autocat::internal {

const std::vector<MethodTraits>& method_table() {
  // One row per Method, in the enum's order (model_sections_test checks
  // it). model_part is
  // the model file's section numbering (ModelPart): fixed by the files
  // written, independent of the enum's order.
  // clang-format off
  static const std::vector<MethodTraits> table = {
      // method                        name      family                    part  slot  prob   live   combo  presence transfer
      {Method::kKnn,                   "knn",    MethodFamily::kKnn,        kNoModelPart, -1, false, false, true,  false, true},
      {Method::kRocchio,               "rocchio", MethodFamily::kRocchio,   0,    -1,   false, true,  true,  false, true},
      {Method::kNaiveBayes,            "nb",     MethodFamily::kNaiveBayes, 1,     0,   true,  true,  true,  false, false},
      {Method::kBernoulliNaiveBayes,   "bnb",    MethodFamily::kNaiveBayes, 2,     1,   true,  true,  true,  true,  false},
      {Method::kComplementNaiveBayes,  "cnb",    MethodFamily::kNaiveBayes, 3,     2,   true,  true,  true,  false, false},
      {Method::kSvm,                   "svm",    MethodFamily::kLinear,     4,     0,   true,  true,  true,  false, true},
      {Method::kLogreg,                "logreg", MethodFamily::kLinear,     5,     1,   true,  true,  true,  false, true},
      {Method::kCombo,                 "combo",  MethodFamily::kCombo,      kNoModelPart, -1, true,  false, false, false, false},
  };
  // clang-format on
  return table;
}

const MethodTraits* find_method_traits(Method method) {
  // The table is in the enum's order, so a method's row is at its value
  // (model_sections_test checks the order).
  const std::vector<MethodTraits>& table = method_table();
  const auto index = static_cast<size_t>(method);
  return index < table.size() && table[index].method == method ? &table[index] : nullptr;
}

const MethodTraits& method_traits(Method method) {
  if (const MethodTraits* traits = find_method_traits(method)) return *traits;
  throw InvalidArgumentError("unknown classifier method " +
                             std::to_string(static_cast<int>(method)));
}

std::vector<Method> methods_of(MethodFamily family) {
  std::vector<Method> methods;
  for (const MethodTraits& traits : method_table()) {
    if (traits.family != family) continue;
    const size_t slot = traits.family_slot < 0 ? 0 : static_cast<size_t>(traits.family_slot);
    if (methods.size() <= slot) methods.resize(slot + 1, traits.method);
    methods[slot] = traits.method;
  }
  return methods;
}

}  // namespace autocat::internal

namespace autocat {

const std::vector<Method>& all_methods() {
  static const std::vector<Method> methods = [] {
    std::vector<Method> all;
    for (const internal::MethodTraits& traits : internal::method_table()) {
      all.push_back(traits.method);
    }
    return all;
  }();
  return methods;
}

std::string method_name(Method method) {
  const internal::MethodTraits* traits = internal::find_method_traits(method);
  return traits ? traits->name : "unknown";
}

std::optional<Method> parse_method(const std::string& name) {
  for (const internal::MethodTraits& traits : internal::method_table()) {
    if (name == traits.name) return traits.method;
  }
  return std::nullopt;
}

}  // namespace autocat
