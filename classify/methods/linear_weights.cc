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
  const auto append_floats = [&](const float* values, size_t count) {
    const size_t at = out.size();
    out.resize(at + count * sizeof(float));
    std::memcpy(out.data() + at, values, count * sizeof(float));
  };
  std::vector<float> row(num_categories);
  for (size_t t = 0; t + 1 < term_start.size(); ++t) {
    hand_out(false);
    const uint64_t first = term_start[t], last = term_start[t + 1];
    put_varint(last - first, &out);
    if (first == last) continue;
    size_t list_bytes = (last - first) * sizeof(float);
    bool no_zero = true, in_range = true;
    for (uint64_t e = first, previous = 0; e < last; ++e) {
      const uint64_t category = entry_category[e];
      list_bytes += varint_bytes(e == first ? category : category - previous - 1);
      previous = category;
      no_zero = no_zero && entry_weight[e] != 0.0f;
      in_range =
          in_range && category < num_categories && (e == first || category > entry_category[e - 1]);
    }
    if (in_range && no_zero && uint64_t{num_categories} * sizeof(float) < list_bytes) {
      out.push_back(kDenseRow);
      std::fill(row.begin(), row.end(), 0.0f);
      for (uint64_t e = first; e < last; ++e) row[entry_category[e]] = entry_weight[e];
      append_floats(row.data(), row.size());
      continue;
    }
    out.push_back(kListRow);
    for (uint64_t e = first, previous = 0; e < last; ++e) {
      const uint64_t category = entry_category[e];
      // Out-of-order categories (never written by training) are kept as
      // they are: their gap wraps around and decodes back.
      put_varint(uint32_t(e == first ? category : category - previous - 1), &out);
      previous = category;
    }
    append_floats(&entry_weight[first], last - first);
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
  std::vector<float> weights(num_categories);
  // Term t's row as pack_weights() writes it, counted (out null) or
  // appended: the non-zero weights as a list of category gaps and
  // weights, or the whole row where that is smaller.
  const auto pack_row = [&](std::vector<uint8_t>* out) -> uint64_t {
    uint64_t count = 0, list_bytes = 0;
    for (uint32_t c = 0, previous = 0; c < num_categories; ++c) {
      if (weights[c] == 0.0f) continue;
      list_bytes += sizeof(float) + varint_bytes(count == 0 ? c : c - previous - 1);
      previous = c;
      ++count;
    }
    const bool dense = count > 0 && uint64_t{num_categories} * sizeof(float) < list_bytes;
    const uint64_t bytes =
        varint_bytes(count) +
        (count == 0 ? 0 : 1 + (dense ? uint64_t{num_categories} * sizeof(float) : list_bytes));
    if (!out || count == 0) {
      if (out) put_varint(count, out);
      return bytes;
    }
    put_varint(count, out);
    const auto append_float = [out](float value) {
      uint8_t raw[sizeof(float)];
      std::memcpy(raw, &value, sizeof(float));
      out->insert(out->end(), raw, raw + sizeof(float));
    };
    if (dense) {
      out->push_back(kDenseRow);
      for (float w : weights) append_float(w == 0.0f ? 0.0f : w);
      return bytes;
    }
    out->push_back(kListRow);
    for (uint32_t c = 0, previous = 0, listed = 0; c < num_categories; ++c) {
      if (weights[c] == 0.0f) continue;
      put_varint(listed++ == 0 ? c : c - previous - 1, out);
      previous = c;
    }
    for (float w : weights) {
      if (w != 0.0f) append_float(w);
    }
    return bytes;
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
