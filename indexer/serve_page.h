// The page `autocat serve` shows at /: indexer/web/index.html, embedded into
// the binary at build time (indexer/web/embed.cmake writes serve_page.cc).
//
// Thread safety: a constant.
#pragma once

namespace autocat::cli {

extern const char kServePage[];

}  // namespace autocat::cli
