#pragma once
// Intra-op parallelism for CPU kernels: tinytorch's own thread pool (cpp/src/parallel.cpp),
// honoring tinytorch.set_num_threads.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include "tinytorch/error.h"

namespace tt {

int get_num_threads();
void set_num_threads(int n);

namespace detail {
// Runs task(ctx, i) for every i in [0, n) on the pool's workers and the calling thread and
// returns when all are done. Tasks are claimed, not assigned: a worker that is asleep or
// descheduled leaves its task to whoever is free, so a region never waits for a thread to
// start (the caller can run them all). Tasks must not throw.
void run_tasks(int64_t n, void (*task)(void* ctx, int64_t i), void* ctx);
bool in_parallel();  // inside a task: nested parallel_for calls run serially
}  // namespace detail

// Calls f(b, e) on disjoint chunks covering [begin, end), in parallel when the range is
// larger than `grain`: one chunk per thread, the chunks' bounds independent of which thread
// runs them. An exception thrown by any chunk is rethrown on the calling thread.
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  int64_t chunks = get_num_threads();
  if (n <= grain || chunks <= 1 || detail::in_parallel()) return f(begin, end);
  chunks = std::min<int64_t>(chunks, (n + grain - 1) / grain);
  const int64_t size = (n + chunks - 1) / chunks;
  std::exception_ptr error;
  std::mutex error_mutex;
  auto chunk = [&](int64_t i) {
    const int64_t b = begin + i * size, e = b + size < end ? b + size : end;
    if (b >= e) return;
    try {
      f(b, e);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  detail::run_tasks(chunks, [](void* c, int64_t i) { (*static_cast<decltype(chunk)*>(c))(i); }, &chunk);
  if (error) std::rethrow_exception(error);
}

// Elements per task below which threading costs more than it saves.
constexpr int64_t kGrainSize = 32768;

}  // namespace tt
