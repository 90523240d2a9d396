// The one exception hierarchy of autocat. Xapian::Error is not a
// std::exception and passes through unwrapped: top-level code catches both.
//
// Thread safety: exceptions are immutable values.
#pragma once

#include <stdexcept>
#include <string>

#include "autocat/export.h"

namespace autocat {

// Base of every error autocat throws. what() is one line that names the file
// (and line) involved and, where there is one, what to do about it.
class AUTOCAT_EXPORT Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A caller passed something invalid: an unknown method or category, a bad
// option value, a malformed input record.
class AUTOCAT_EXPORT InvalidArgumentError : public Error {
 public:
  using Error::Error;
};

// A file, directory or model that should exist does not.
class AUTOCAT_EXPORT NotFoundError : public Error {
 public:
  using Error::Error;
};

// A model file that is truncated, foreign, corrupted or of a newer format.
class AUTOCAT_EXPORT ModelFormatError : public Error {
 public:
  using Error::Error;
};

// The request contradicts the current state: undoing a correction already
// undone, or one a later correction of the same document replaced.
class AUTOCAT_EXPORT ConflictError : public Error {
 public:
  using Error::Error;
};

// Reading or writing a file failed.
class AUTOCAT_EXPORT IOError : public Error {
 public:
  using Error::Error;
};

}  // namespace autocat
