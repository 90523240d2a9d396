// AUTOCAT_EXPORT marks the public API: libautocat is built with hidden
// visibility, so only what carries it is exported from the shared library
// (`nm -D libautocat.so` lists autocat:: public names only).
//
// Thread safety: macros only.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define AUTOCAT_EXPORT __attribute__((visibility("default")))
#else
#define AUTOCAT_EXPORT
#endif
