#pragma once
// Seeded random numbers. tt::Generator is a Philox4x32-10 (seed, offset) pair: every draw of n
// elements uses counters [offset, offset + n) and advances offset by n, so the same seed
// gives the same numbers on any thread count (and, later, on CUDA).
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include "tinytorch/kernels/random.h"

namespace tt {

class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ull, Device device = Device()) : seed_(seed), device_(device) {}
  void manual_seed(uint64_t seed);
  uint64_t seed();  // reseeds from std::random_device, returns the new seed
  uint64_t initial_seed() const;
  Device device() const { return device_; }
  std::pair<uint64_t, uint64_t> get_state() const;  // (seed, offset)
  void set_state(uint64_t seed, uint64_t offset);
  std::string get_state_bytes() const;               // 16 bytes: seed, offset (little-endian u64)
  void set_state_bytes(const std::string& bytes);
  // Reserves n counters and returns the state to draw them from.
  PhiloxState reserve(uint64_t n);

 private:
  mutable std::mutex mutex_;
  uint64_t seed_, offset_ = 0;
  Device device_;
};

// One default generator per device (created on first use).
Generator& default_generator(Device device = Device());
void manual_seed(uint64_t seed);  // seeds every default generator made so far and later ones

Tensor& uniform_(Tensor& x, double low = 0, double high = 1, Generator* gen = nullptr);
Tensor& normal_(Tensor& x, double mean = 0, double std = 1, Generator* gen = nullptr);
Tensor& bernoulli_(Tensor& x, double p, Generator* gen = nullptr);
Tensor bernoulli(const Tensor& probs, Generator* gen = nullptr);  // same dtype as probs, values 0/1
Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype = DType::Int64, Device device = Device(),
               Generator* gen = nullptr);
Tensor randperm(int64_t n, DType dtype = DType::Int64, Device device = Device(), Generator* gen = nullptr);
Tensor rand(const Shape& shape, DType dtype, Device device = Device(), Generator* gen = nullptr);
Tensor randn(const Shape& shape, DType dtype, Device device = Device(), Generator* gen = nullptr);

}  // namespace tt
