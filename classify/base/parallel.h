// parallel_for(): independent tasks on every core.
//
// Thread safety: `body` runs concurrently on up to `threads` threads; it must
// only write what belongs to its own index.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace autocat::internal {

// Runs body(i) for i in [0, count), each once, on up to `threads` threads
// (0: one per core) taking the next index as they finish. The first
// exception thrown is rethrown here once every thread has stopped; the
// others then start no new index.
template <typename Body>
void parallel_for(size_t count, const Body& body, unsigned threads = 0) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto worker = [&] {
    for (size_t i; (i = next++) < count;) {
      try {
        body(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = count;
      }
    }
  };
  std::vector<std::thread> helpers;
  const size_t wanted = std::min<size_t>(threads, count);
  for (size_t t = 1; t < wanted; ++t) helpers.emplace_back(worker);
  worker();
  for (std::thread& helper : helpers) helper.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace autocat::internal
