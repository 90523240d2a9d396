// A Boost binary input archive for untrusted bytes: the same format as
// boost::archive::binary_iarchive, but every length read from the input
// (a string's size, a collection's element count) is checked against the
// bytes left before anything is allocated, and a bool must be 0 or 1. So a
// crafted file can never make the reader allocate much more than its own
// size (at most a small constant factor: a std::vector<std::string> element
// takes 32 bytes in memory and 8 in the file).
//
// Thread safety: one archive per thread, like any Boost archive.
#pragma once

#include <boost/archive/binary_iarchive_impl.hpp>
#include <boost/archive/detail/register_archive.hpp>
#include <boost/serialization/collection_size_type.hpp>
#include <boost/serialization/vector.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace autocat::internal {

// Thrown when a length in the input exceeds what the bytes left can hold,
// or a value cannot be what the writer wrote.
class ImpossibleLengthError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads from a caller-owned buffer without copying it, and knows how many
// bytes are left. Given an `owner` (the mapping that holds the bytes),
// loaders may keep views into the buffer instead of copying
// (BoundedBinaryIarchive::view_bytes_vector); `release(data, size)`, if
// given, drops the pages of those bytes from memory once they are read
// (they can be read again).
class BoundedInputBuffer : public std::streambuf {
 public:
  using Release = std::function<void(const char* data, size_t size)>;
  BoundedInputBuffer(const char* data, size_t size, std::shared_ptr<const void> owner = nullptr,
                     Release release = nullptr)
      : owner_(std::move(owner)), release_(std::move(release)) {
    char* begin = const_cast<char*>(data);  // read-only: no put area, no putback writes
    setg(begin, begin, begin + size);
  }
  size_t remaining() const { return static_cast<size_t>(egptr() - gptr()); }
  const std::shared_ptr<const void>& owner() const { return owner_; }
  const Release& release() const { return release_; }
  // The next `size` bytes, skipped. REQUIRES size <= remaining().
  const char* take(size_t size) {
    char* at = gptr();
    setg(eback(), at + size, egptr());
    return at;
  }

 private:
  std::shared_ptr<const void> owner_;
  Release release_;
};

class BoundedBinaryIarchive
    : public boost::archive::binary_iarchive_impl<BoundedBinaryIarchive, char,
                                                  std::char_traits<char>> {
  using Base =
      boost::archive::binary_iarchive_impl<BoundedBinaryIarchive, char, std::char_traits<char>>;

 public:
  explicit BoundedBinaryIarchive(BoundedInputBuffer& buffer)
      : Base(buffer, boost::archive::no_codecvt | boost::archive::no_header), buffer_(buffer) {
    init(0);  // after buffer_ is set: the header holds a string
  }

  // The minimum bytes one element of the next collection takes in the
  // input; set by the std::vector loader below just before Boost reads the
  // element count.
  void expect_element_bytes(size_t bytes) { next_element_bytes_ = bytes; }

  // Public: Boost's archive templates call these on the derived archive.
  using Base::load;
  using Base::load_override;

  // A std::vector<uint8_t> in the input, as a view: true if the buffer has
  // an owner to keep the bytes alive.
  bool can_view() const { return buffer_.owner() != nullptr; }
  struct View {
    std::shared_ptr<const void> owner;
    const char* data = nullptr;
    size_t size = 0;
    // Drops the pages of the view's first `offset` bytes (a no-op if the
    // buffer has no release).
    std::function<void(size_t offset)> release;
  };
  // Reads what loading a std::vector<uint8_t> reads (the same wire format,
  // Boost's array-optimized vector), leaving the bytes where they are.
  // REQUIRES can_view().
  View view_bytes_vector() { return view_vector(1); }
  // The same for a std::vector of an arithmetic type of `element_bytes`
  // bytes: View::size counts elements, View::data is not aligned for them
  // (read them with memcpy).
  View view_vector(size_t element_bytes) {
    boost::serialization::collection_size_type count;
    expect_element_bytes(element_bytes);
    *this >> count;  // checked against the bytes left
    unsigned int item_version = 0;
    if (BOOST_SERIALIZATION_VECTOR_VERSIONED(get_library_version())) *this >> item_version;
    if (count > buffer_.remaining() / element_bytes) {
      throw ImpossibleLengthError("a collection of " + std::to_string(size_t(count)) +
                                  " items where only " + std::to_string(buffer_.remaining()) +
                                  " bytes are left");
    }
    View view;
    view.owner = buffer_.owner();
    view.size = count;
    view.data = buffer_.take(count * element_bytes);
    if (buffer_.release()) {
      view.release = [release = buffer_.release(), data = view.data](size_t offset) {
        release(data, offset);
      };
    }
    return view;
  }

  void load_override(boost::serialization::collection_size_type& count) {
    const size_t element_bytes = std::exchange(next_element_bytes_, 1);
    Base::load_override(count);
    const size_t left = buffer_.remaining();
    if (count > left / element_bytes) {
      throw ImpossibleLengthError("a collection of " + std::to_string(size_t(count)) +
                                  " items where only " + std::to_string(left) + " bytes are left");
    }
  }

  void load(std::string& s) {
    uint64_t length = 0;
    load_binary(&length, sizeof length);
    if (length > buffer_.remaining()) {
      throw ImpossibleLengthError("a string of " + std::to_string(length) + " bytes where only " +
                                  std::to_string(buffer_.remaining()) + " bytes are left");
    }
    s.resize(static_cast<size_t>(length));
    if (length > 0) load_binary(s.data(), static_cast<size_t>(length));
  }

  // Boost copies the byte into the bool and only asserts it is 0 or 1.
  void load(bool& b) {
    unsigned char byte = 0;
    load_binary(&byte, 1);
    if (byte > 1) throw ImpossibleLengthError("a boolean stored as " + std::to_string(byte));
    b = byte != 0;
  }

 private:
  BoundedInputBuffer& buffer_;
  size_t next_element_bytes_ = 1;
};

// The fewest bytes a value of type T takes in a binary archive.
template <class T>
struct MinEncodedBytes {
  static constexpr size_t value = std::is_arithmetic_v<T> ? sizeof(T) : 1;
};
template <>
struct MinEncodedBytes<std::string> {
  static constexpr size_t value = sizeof(uint64_t);  // the length
};
template <class U, class A>
struct MinEncodedBytes<std::vector<U, A>> {
  static constexpr size_t value = sizeof(uint64_t);  // the element count
};
template <class A, class B>
struct MinEncodedBytes<std::pair<A, B>> {
  static constexpr size_t value = MinEncodedBytes<A>::value + MinEncodedBytes<B>::value;
};

// Found by argument-dependent lookup ahead of Boost's generic vector loader
// (more specialized): tells the archive the element size, then lets Boost
// read the vector as usual.
template <class U, class A>
void load(BoundedBinaryIarchive& archive, std::vector<U, A>& vector, const unsigned int version) {
  archive.expect_element_bytes(MinEncodedBytes<U>::value);
  boost::serialization::load(archive, vector, version);
}

}  // namespace autocat::internal

// Same wire format as binary_iarchive, which writes vectors of arithmetic
// types as one block.
BOOST_SERIALIZATION_USE_ARRAY_OPTIMIZATION(autocat::internal::BoundedBinaryIarchive)
BOOST_SERIALIZATION_REGISTER_ARCHIVE(autocat::internal::BoundedBinaryIarchive)
