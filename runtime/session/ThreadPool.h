//===- ThreadPool.h - The CPU session's kernel threads ----------*- C++ -*-===//
//
// CPU sessions run a launch whose kernel exports `symbol_range` as
// contiguous chunks of its outer loop on a pool of persistent threads
// (Session.h, "Threading").
//
//===----------------------------------------------------------------------===//

#ifndef GENESIS_RUNTIME_THREADPOOL_H
#define GENESIS_RUNTIME_THREADPOOL_H

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace genesis {

/// `symbol_range(args, begin, end)`: iterations [begin, end) of the kernel's
/// outermost loop.
using RangeFunction = void (*)(void **, int64_t, int64_t);

/// The number of threads a session runs kernels on: GENESIS_NUM_THREADS, or
/// else the hardware's concurrency.
/// `where` names the session in the error for a bad value.
unsigned sessionThreadCount(const std::string &where);

/// Persistent workers that run contiguous chunks of a kernel's outer range.
/// The calling thread claims chunks too, so when a worker is slow to wake (a
/// busy machine) the caller runs its chunk instead of waiting for it; it then
/// waits only for chunks already running. Kernels are C functions and do not
/// throw, so a claimed chunk always completes.
class ThreadPool {
public:
  /// `threads` counts the caller; at most threads - 1 workers are started
  /// (fewer if the system refuses to create more).
  explicit ThreadPool(unsigned threads) {
    for (unsigned i = 1; i < threads; ++i) {
      try {
        workers_.emplace_back([this] { work(); });
      } catch (const std::system_error &) {
        break;
      }
    }
  }
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    start_.notify_all();
    for (std::thread &worker : workers_)
      worker.join();
  }

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  /// Runs kernel(args, begin, end) over [0, extent) split into
  /// min(size(), extent) contiguous chunks; returns when all are done.
  void run(RangeFunction kernel, void **args, int64_t extent) {
    unsigned chunks = static_cast<unsigned>(std::min<int64_t>(size(), extent));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      kernel_ = kernel;
      args_ = args;
      extent_ = extent;
      chunks_ = chunks;
      next_ = 0;
      pending_ = chunks;
      ++generation_;
    }
    start_.notify_all();
    std::unique_lock<std::mutex> lock(mutex_);
    runChunks(lock);
    done_.wait(lock, [this] { return pending_ == 0; });
  }

private:
  static int64_t chunkBegin(unsigned chunk, int64_t extent, unsigned chunks) {
    // extent * chunk / chunks without overflow for any int64 extent.
    return extent / chunks * chunk + extent % chunks * chunk / chunks;
  }

  void work() {
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      start_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
      runChunks(lock);
    }
  }

  /// Claims and runs chunks of the current launch until none is left.
  void runChunks(std::unique_lock<std::mutex> &lock) {
    while (next_ < chunks_) {
      unsigned chunk = next_++;
      RangeFunction kernel = kernel_;
      void **args = args_;
      int64_t begin = chunkBegin(chunk, extent_, chunks_);
      int64_t end = chunkBegin(chunk + 1, extent_, chunks_);
      lock.unlock();
      kernel(args, begin, end);
      lock.lock();
      if (--pending_ == 0)
        done_.notify_one();
    }
  }

  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  std::vector<std::thread> workers_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  RangeFunction kernel_ = nullptr;
  void **args_ = nullptr;
  int64_t extent_ = 0;
  unsigned chunks_ = 0;
  /// The next chunk to claim, and the chunks not yet finished.
  unsigned next_ = 0;
  unsigned pending_ = 0;
};

} // namespace genesis

#endif // GENESIS_RUNTIME_THREADPOOL_H
