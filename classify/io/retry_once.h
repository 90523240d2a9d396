// RetryOnce: runs a function once, like std::call_once, but a call that
// throws leaves it not done, and the next caller runs it again. Unlike
// std::call_once, whose retry after an exception relies on pthread_once
// unwinding (ThreadSanitizer's pthread_once hangs on the retry), this is a
// mutex and a flag.
//
// Thread safety: run() may be called from many threads at once; one runs
// the function at a time, and every caller that returns normally sees what
// a successful run wrote.
#pragma once

#include <atomic>
#include <mutex>

namespace autocat::internal {

class RetryOnce {
 public:
  template <class Function>
  void run(Function&& function) {
    if (done_.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (done_.load(std::memory_order_relaxed)) return;
    function();
    done_.store(true, std::memory_order_release);
  }

 private:
  std::mutex mutex_;
  std::atomic<bool> done_{false};
};

}  // namespace autocat::internal
