// LinearModel's weights in the model file: per term, the categories with a
// non-zero weight, packed as varint gaps and floats (linear.h).
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "autocat/error.h"
#include "classify/methods/linear.h"

namespace autocat::internal {

namespace {

void put_varint(uint64_t value, std::vector<uint8_t>* out) {
  while (value >= 0x80) {
    out->push_back(uint8_t(value | 0x80));
    value >>= 7;
  }
  out->push_back(uint8_t(value));
}

size_t varint_bytes(uint64_t value) {
  size_t bytes = 1;
  while (value >= 0x80) value >>= 7, ++bytes;
  return bytes;
}

// Reads bytes [*at, end) of a packed model; false past the end or on a
// varint longer than 64 bits.
class PackedReader {
 public:
  explicit PackedReader(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  bool varint(uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= bytes_.size()) return false;
      const uint8_t byte = bytes_[at_++];
      *value |= uint64_t(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }
  bool byte(uint8_t* value) {
    if (at_ >= bytes_.size()) return false;
    *value = bytes_[at_++];
    return true;
  }
  bool floats(float* out, uint64_t count) {
    if (count > (bytes_.size() - at_) / sizeof(float)) return false;
    std::memcpy(out, bytes_.data() + at_, count * sizeof(float));
    at_ += count * sizeof(float);
    return true;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const std::vector<uint8_t>& bytes_;
  size_t at_ = 0;
};

constexpr uint8_t kListRow = 0, kDenseRow = 1;

// One term's row as the model file stores it, from its `count` weights
// (`weights[i]` of category `categories[i]`): the count, then either the
// category gaps and the weights or, where that is smaller and
// `may_be_dense` (categories ascending and in range, no weight zero), the
// whole row of num_categories floats. Appended to *out (`row` the dense
// row's scratch); out null: only counted. Returns the bytes.
uint64_t put_row(uint32_t num_categories, const uint32_t* categories, const float* weights,
                 size_t count, bool may_be_dense, std::vector<float>* row,
                 std::vector<uint8_t>* out) {
  // Out-of-order categories (never written by training) are kept as they
  // are: their gap wraps around and decodes back.
  const auto gap = [&](size_t i) {
    return uint32_t(i == 0 ? categories[0] : categories[i] - categories[i - 1] - 1);
  };
  uint64_t list_bytes = count * sizeof(float);
  for (size_t i = 0; i < count; ++i) list_bytes += varint_bytes(gap(i));
  const uint64_t dense_bytes = uint64_t{num_categories} * sizeof(float);
  const bool dense = count > 0 && may_be_dense && dense_bytes < list_bytes;
  const uint64_t bytes =
      varint_bytes(count) + (count == 0 ? 0 : 1 + (dense ? dense_bytes : list_bytes));
  if (!out) return bytes;
  const auto append_floats = [out](const float* values, size_t n) {
    const size_t at = out->size();
    out->resize(at + n * sizeof(float));
    std::memcpy(out->data() + at, values, n * sizeof(float));
  };
  put_varint(count, out);
  if (count == 0) return bytes;
  if (dense) {
    out->push_back(kDenseRow);
    row->assign(num_categories, 0.0f);
    for (size_t i = 0; i < count; ++i) (*row)[categories[i]] = weights[i];
    append_floats(row->data(), row->size());
    return bytes;
  }
  out->push_back(kListRow);
  for (size_t i = 0; i < count; ++i) put_varint(gap(i), out);
  append_floats(weights, count);
  return bytes;
}

}  // namespace

void LinearModel::pack_weights(const std::function<void(const uint8_t*, size_t)>& emit) const {
  // Handed out in pieces of about a megabyte: a model's packed weights are
  // never held whole (logistic regression's reach gigabytes at 10,000
  // categories).
  constexpr size_t kPieceBytes = size_t{1} << 20;
  std::vector<uint8_t> out;
  out.reserve(kPieceBytes + 64);
  const auto hand_out = [&](bool last) {
    if (out.size() < kPieceBytes && !(last && !out.empty())) return;
    emit(out.data(), out.size());
    out.clear();
  };
  put_varint(term_start.size(), &out);
  std::vector<float> row;
  for (size_t t = 0; t + 1 < term_start.size(); ++t) {
    hand_out(false);
    const uint64_t first = term_start[t], last = term_start[t + 1];
    bool no_zero = true, in_range = true;
    for (uint64_t e = first; e < last; ++e) {
      no_zero = no_zero && entry_weight[e] != 0.0f;
      in_range = in_range && entry_category[e] < num_categories &&
                 (e == first || entry_category[e] > entry_category[e - 1]);
    }
    put_row(num_categories, entry_category.data() + first, entry_weight.data() + first,
            last - first, in_range && no_zero, &row, &out);
  }
  hand_out(true);
}

uint64_t LinearModel::packed_bytes() const {
  uint64_t bytes = 0;
  pack_weights([&](const uint8_t*, size_t size) { bytes += size; });
  return bytes;
}

std::vector<uint8_t> LinearModel::packed_weights() const {
  std::vector<uint8_t> packed;
  packed.reserve(packed_bytes());
  pack_weights(
      [&](const uint8_t* bytes, size_t size) { packed.insert(packed.end(), bytes, bytes + size); });
  return packed;
}

void LinearModel::unpack_weights(const std::vector<uint8_t>& packed) {
  term_start.clear();
  entry_category.clear();
  entry_weight.clear();
  const auto refuse = [this] { term_start.assign(1, 1); };  // inconsistent
  PackedReader in(packed);
  uint64_t starts = 0;
  if (!in.varint(&starts) || starts > packed.size()) return refuse();
  if (starts == 0) return in.done() ? void() : refuse();
  term_start.reserve(starts);
  term_start.push_back(0);
  std::vector<float> row;  // sized at the first dense row
  for (uint64_t t = 0; t + 1 < starts; ++t) {
    uint64_t count = 0;
    if (!in.varint(&count) || count > num_categories) return refuse();
    if (count > 0) {
      uint8_t kind = 0;
      if (!in.byte(&kind)) return refuse();
      if (kind == kDenseRow) {
        if (uint64_t{num_categories} * sizeof(float) > packed.size()) return refuse();
        row.resize(num_categories);
        if (!in.floats(row.data(), row.size())) return refuse();
        for (uint32_t c = 0; c < num_categories; ++c) {
          if (row[c] == 0.0f) continue;
          entry_category.push_back(c);
          entry_weight.push_back(row[c]);
        }
        if (entry_weight.size() - term_start.back() != count) return refuse();
      } else if (kind == kListRow) {
        uint32_t previous = 0;
        for (uint64_t i = 0; i < count; ++i) {
          uint64_t gap = 0;
          if (!in.varint(&gap)) return refuse();
          const uint32_t category = uint32_t(i == 0 ? gap : previous + 1 + gap);
          entry_category.push_back(category);
          previous = category;
        }
        entry_weight.resize(entry_category.size());
        if (!in.floats(&entry_weight[term_start.back()], count)) return refuse();
      } else {
        return refuse();
      }
    }
    term_start.push_back(entry_category.size());
  }
  if (!in.done()) return refuse();
}

bool PackedLinearRows::index(const std::function<void(size_t)>& release) {
  row_offset.clear();
  num_entries = 0;
  if (size > std::numeric_limits<uint32_t>::max()) return false;
  const uint8_t* const end = bytes + size;
  const uint8_t* at = bytes;
  const auto varint = [&](uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at == end) return false;
      const uint8_t byte = *at++;
      *value |= uint64_t(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  };
  uint64_t starts = 0;
  if (!varint(&starts) || starts > size) return false;
  if (starts == 0) return false;  // not trained: stored as entries (none)
  row_offset.reserve(starts);
  // Dropped behind the scan in steps of this many bytes.
  constexpr size_t kReleaseStep = size_t{32} << 20;
  size_t released = 0;
  float weight;
  for (uint64_t t = 0; t + 1 < starts; ++t) {
    if (release && size_t(at - bytes) >= released + 2 * kReleaseStep) {
      released += kReleaseStep;
      release(released);
    }
    row_offset.push_back(uint32_t(at - bytes));
    uint64_t count = 0;
    if (!varint(&count) || count > num_categories) return false;
    if (count == 0) continue;
    if (at == end) return false;
    const uint8_t kind = *at++;
    if (kind == kDenseRow) {
      if (uint64_t(end - at) < uint64_t{num_categories} * sizeof(float)) return false;
      // On the bits, branch-free (this loop reads most of a large model):
      // exponent all ones is infinite or NaN; no bits but the sign is zero.
      uint64_t non_zero = 0;
      uint32_t not_finite = 0;
      for (uint32_t c = 0; c < num_categories; ++c, at += sizeof(float)) {
        uint32_t bits;
        std::memcpy(&bits, at, sizeof bits);
        not_finite |= uint32_t((bits & 0x7f800000u) == 0x7f800000u);
        non_zero += uint32_t((bits & 0x7fffffffu) != 0);
      }
      if (not_finite != 0 || non_zero != count) return false;
    } else if (kind == kListRow) {
      uint64_t category = 0;
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t gap = 0;
        if (!varint(&gap)) return false;
        category = i == 0 ? gap : category + 1 + gap;
        if (category >= num_categories) return false;
      }
      if (uint64_t(end - at) < count * sizeof(float)) return false;
      for (uint64_t i = 0; i < count; ++i, at += sizeof(float)) {
        std::memcpy(&weight, at, sizeof(float));
        if (!std::isfinite(weight)) return false;
      }
    } else {
      return false;
    }
    num_entries += count;
  }
  if (at != end) return false;
  row_offset.push_back(uint32_t(size));
  return true;
}

std::shared_ptr<std::vector<uint8_t>> pack_dense_rows(uint32_t num_categories, uint32_t num_terms,
                                                      const DenseRowSource& row) {
  std::vector<float> weights(num_categories), scratch;
  std::vector<uint32_t> listed_categories;
  std::vector<float> listed_weights;
  // Term t's row as pack_weights() writes it from its non-zero weights,
  // counted (out null) or appended.
  const auto pack_row = [&](std::vector<uint8_t>* out) {
    listed_categories.clear();
    listed_weights.clear();
    for (uint32_t c = 0; c < num_categories; ++c) {
      if (weights[c] == 0.0f) continue;
      listed_categories.push_back(c);
      listed_weights.push_back(weights[c]);
    }
    return put_row(num_categories, listed_categories.data(), listed_weights.data(),
                   listed_categories.size(), true, &scratch, out);
  };
  const uint64_t starts = uint64_t{num_terms} + 1;
  uint64_t size = varint_bytes(starts);
  for (uint32_t t = 0; t < num_terms; ++t) {
    row(t, false, weights.data());
    size += pack_row(nullptr);
  }
  if (size > std::numeric_limits<uint32_t>::max()) return nullptr;
  auto bytes = std::make_shared<std::vector<uint8_t>>();
  bytes->reserve(size);
  put_varint(starts, bytes.get());
  for (uint32_t t = 0; t < num_terms; ++t) {
    row(t, true, weights.data());
    pack_row(bytes.get());
  }
  return bytes;
}

uint64_t LinearModel::weight_bytes() const {
  if (packed_rows) {
    return packed_rows->row_offset.size() * sizeof(uint32_t) +
           (bias.size() + slope.size() + intercept.size()) * sizeof(float);
  }
  return term_start.size() * sizeof(uint64_t) +
         entry_category.size() * (sizeof(uint32_t) + sizeof(float)) +
         (bias.size() + slope.size() + intercept.size()) * sizeof(float);
}

}  // namespace autocat::internal
