// The CPU thread pool behind parallel_for. Workers spin for a short while after each region
// (TINYTORCH_THREAD_SPIN_US, default below), so the ~120 back-to-back small regions of a decode
// step don't pay a wake-up each, then sleep, so idle workers never hold cores another process
// wants. Spinning yields the core when anything else is runnable, and tasks are claimed rather
// than assigned, so on a busy machine a region runs at worst as fast as the calling thread alone.
#include "tinytorch/parallel.h"
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern "C" void scipy_openblas_set_num_threads(int);

namespace tt {
namespace {

using Clock = std::chrono::steady_clock;

// OMP_NUM_THREADS (as PyTorch reads it), else the CPUs this process may run on.
int default_threads() {
  if (const char* s = std::getenv("OMP_NUM_THREADS")) {
    int n = std::atoi(s);
    if (n > 0) return n;
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Long enough to bridge the Python between two ops of a decode step (a few to ~50 µs), short
// enough that a worker gives its core back soon after the work stops.
constexpr int64_t kDefaultSpinMicros = 1000;

// How long a worker spins for the next region before it sleeps; OMP_WAIT_POLICY=PASSIVE
// (libgomp's word for "never spin") means 0.
std::chrono::microseconds spin_time() {
  if (const char* s = std::getenv("TINYTORCH_THREAD_SPIN_US")) return std::chrono::microseconds(std::atoll(s));
  if (const char* p = std::getenv("OMP_WAIT_POLICY"); p && strcasecmp(p, "passive") == 0)
    return std::chrono::microseconds(0);
  return std::chrono::microseconds(kDefaultSpinMicros);
}

thread_local bool inside_task = false;

class Pool {
 public:
  explicit Pool(std::chrono::microseconds spin) : spin_(spin) {}

  // Never joined: the pool lives until the process exits (and is abandoned in a fork's child).
  void run(int64_t n, void (*task)(void*, int64_t), void* ctx, int threads) {
    std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) {  // another thread's region holds the pool: run this one here
      for (int64_t i = 0; i < n; ++i) task(ctx, i);
      return;
    }
    grow(threads - 1);
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = task, ctx_ = ctx, n_ = n, next_ = 0, done_.store(0, std::memory_order_relaxed);
      wanted_ = threads - 1;
      generation_.fetch_add(1, std::memory_order_release);
      wake = sleeping_ > 0;
    }
    if (wake) wake_.notify_all();
    inside_task = true;
    int64_t ran = 0;
    for (int64_t i; (i = claim(generation_.load(std::memory_order_relaxed))) >= 0; ++ran) task(ctx, i);
    inside_task = false;
    if (done_.fetch_add(ran, std::memory_order_acq_rel) + ran == n) return;
    // a worker still runs a task: spin, yielding the core if that worker waits for one
    for (int spins = 0; done_.load(std::memory_order_acquire) != n; ++spins) {
      if (spins < 256) _mm_pause();
      else sched_yield();
    }
  }

 private:
  // The next task of region `generation`, or -1 when it has none left (or has ended).
  int64_t claim(uint64_t generation) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (generation_.load(std::memory_order_relaxed) != generation || next_ >= n_) return -1;
    return next_++;
  }

  void grow(int workers) {
    while (static_cast<int>(started_) < workers) {
      const int index = started_++;
      std::thread([this, index] { work(index); }).detach();
    }
  }

  void work(int index) {
    inside_task = true;  // a worker's nested parallel_for runs serially
    uint64_t seen = generation_.load(std::memory_order_acquire);
    for (;;) {
      const auto deadline = Clock::now() + spin_;
      for (int spins = 0; generation_.load(std::memory_order_acquire) == seen; ++spins) {
        if ((spins & 63) == 0 && Clock::now() >= deadline) {
          std::unique_lock<std::mutex> lock(mutex_);
          ++sleeping_;
          wake_.wait(lock, [&] { return generation_.load(std::memory_order_relaxed) != seen; });
          --sleeping_;
          break;
        }
        _mm_pause();
        if ((spins & 15) == 15) sched_yield();  // give the core to anything runnable
      }
      seen = generation_.load(std::memory_order_acquire);
      int64_t ran = 0;
      void (*task)(void*, int64_t);
      void* ctx;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (generation_.load(std::memory_order_relaxed) != seen || index >= wanted_) continue;
        task = task_, ctx = ctx_;
      }
      for (int64_t i; (i = claim(seen)) >= 0; ++ran) task(ctx, i);
      if (ran) done_.fetch_add(ran, std::memory_order_acq_rel);
    }
  }

  const std::chrono::microseconds spin_;
  std::mutex run_mutex_;  // one region at a time
  std::mutex mutex_;      // the region's fields below
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  void (*task_)(void*, int64_t) = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0, next_ = 0;
  int wanted_ = 0, sleeping_ = 0;
  std::atomic<int64_t> done_{0};
  int started_ = 0;  // guarded by run_mutex_
};

Pool* pool = nullptr;
std::once_flag pool_once;

Pool& the_pool() {
  std::call_once(pool_once, [] {
    pool = new Pool(spin_time());
    // a fork's child has none of the parent's threads: it starts a new pool (the old one leaks)
    pthread_atfork(nullptr, nullptr, [] { pool = new Pool(spin_time()); });
  });
  return *pool;
}

int num_threads = [] {
  scipy_openblas_set_num_threads(1);
  return default_threads();
}();
}  // namespace

int get_num_threads() { return num_threads; }

void set_num_threads(int n) {
  TT_CHECK_VALUE(n > 0, "set_num_threads: Expected positive number of threads, got ", n);
  num_threads = n;
  // OpenBLAS stays single-threaded: our GEMM kernel splits work over our threads itself
  // (OpenBLAS's own pool beside ours oversubscribes and can hang).
  scipy_openblas_set_num_threads(1);
}

namespace detail {
bool in_parallel() { return inside_task; }

void run_tasks(int64_t n, void (*task)(void*, int64_t), void* ctx) {
  const int threads = static_cast<int>(std::min<int64_t>(n, get_num_threads()));
  if (threads <= 1 || inside_task) {
    for (int64_t i = 0; i < n; ++i) task(ctx, i);
    return;
  }
  the_pool().run(n, task, ctx, threads);
}
}  // namespace detail

}  // namespace tt
