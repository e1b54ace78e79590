// Generators and random ops. The op layer owns the Philox counter bookkeeping: each op
// reserves numel counters from its generator and hands (seed, offset) to the kernel.
#include "tinytorch/ops/random.h"
#include <cstring>
#include <random>
#include <vector>
#include "tinytorch/ops/elementwise.h"
#include "tinytorch/ops/index.h"

namespace tt {

TT_DEFINE_KERNEL(uniform)
TT_DEFINE_KERNEL(normal)
TT_DEFINE_KERNEL(bernoulli)
TT_DEFINE_KERNEL(randint)
TT_DEFINE_KERNEL(random_keys)

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  offset_ = 0;
}

uint64_t Generator::seed() {
  std::random_device rd;
  uint64_t s = (uint64_t(rd()) << 32) ^ rd();
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return seed_;
}

std::pair<uint64_t, uint64_t> Generator::get_state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return {seed_, offset_};
}

void Generator::set_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> lock(mutex_);
  seed_ = seed;
  offset_ = offset;
}

std::string Generator::get_state_bytes() const {
  auto [s, o] = get_state();
  std::string out(16, '\0');
  for (int i = 0; i < 8; ++i) {
    out[i] = static_cast<char>((s >> (8 * i)) & 0xff);
    out[8 + i] = static_cast<char>((o >> (8 * i)) & 0xff);
  }
  return out;
}

void Generator::set_state_bytes(const std::string& b) {
  TT_CHECK_VALUE(b.size() == 16, "Generator.set_state: expected a 16-byte state (seed, offset), got ", b.size(),
                 " bytes");
  uint64_t s = 0, o = 0;
  for (int i = 0; i < 8; ++i) {
    s |= uint64_t(static_cast<unsigned char>(b[i])) << (8 * i);
    o |= uint64_t(static_cast<unsigned char>(b[8 + i])) << (8 * i);
  }
  set_state(s, o);
}

PhiloxState Generator::reserve(uint64_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  PhiloxState st{seed_, offset_};
  offset_ += n;
  return st;
}

namespace {
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
// Generators live for the whole process (never freed: Python may hold references).
std::vector<std::unique_ptr<Generator>>& registry(DeviceType t) {
  static std::vector<std::unique_ptr<Generator>> regs[kNumDeviceTypes];
  return regs[static_cast<int>(t)];
}
constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default
bool have_global_seed = false;
uint64_t global_seed = 0;

Generator& pick(Generator* gen, Device device) { return gen ? *gen : default_generator(device); }

void check_floating(const char* op, const Tensor& x) {
  TT_CHECK(is_floating(x.dtype()), op, ": expected a floating point tensor, got ", x.describe());
}

// Runs kernel(contiguous target) and copies back when x is not contiguous, so element i
// always means the i-th element in row-major order.
template <class K>
void fill_random(Tensor& x, const K& kernel) {
  if (x.is_contiguous()) {
    kernel(x);
  } else {
    Tensor tmp = Tensor::empty(x.shape(), x.dtype(), x.device());
    kernel(tmp);
    copy_kernel[x.device()](tmp, x);
  }
  x.bump_version();
}
}  // namespace

Generator& default_generator(Device device) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& reg = registry(device.type);
  size_t i = static_cast<size_t>(std::max(device.index, 0));
  while (reg.size() <= i) {
    Device d(device.type, static_cast<int>(reg.size()));
    reg.push_back(std::make_unique<Generator>(have_global_seed ? global_seed : kDefaultSeed, d));
  }
  return *reg[i];
}

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  have_global_seed = true;
  global_seed = seed;
  for (int t = 0; t < kNumDeviceTypes; ++t)
    for (auto& g : registry(static_cast<DeviceType>(t))) g->manual_seed(seed);
}

Tensor& uniform_(Tensor& x, double low, double high, Generator* gen) {
  check_floating("uniform_", x);
  TT_CHECK(low <= high, "uniform_: expects to return a [from, to) range, but found from=", low, " > to=", high);
  PhiloxState st = pick(gen, x.device()).reserve(x.numel());
  fill_random(x, [&](const Tensor& t) { uniform_kernel[t.device()](t, low, high, st); });
  return x;
}

Tensor& normal_(Tensor& x, double mean, double std, Generator* gen) {
  check_floating("normal_", x);
  TT_CHECK(std >= 0, "normal_: expects std >= 0.0, but found std ", std);
  PhiloxState st = pick(gen, x.device()).reserve(x.numel());
  fill_random(x, [&](const Tensor& t) { normal_kernel[t.device()](t, mean, std, st); });
  return x;
}

Tensor& bernoulli_(Tensor& x, double p, Generator* gen) {
  TT_CHECK(p >= 0 && p <= 1, "bernoulli_: expects p to be in [0, 1], but got p=", p);
  PhiloxState st = pick(gen, x.device()).reserve(x.numel());
  fill_random(x, [&](const Tensor& t) { bernoulli_kernel[t.device()](t, p, Tensor(), st); });
  return x;
}

Tensor bernoulli(const Tensor& probs, Generator* gen) {
  check_floating("bernoulli", probs);
  Tensor out = Tensor::empty(probs.shape(), probs.dtype(), probs.device());
  PhiloxState st = pick(gen, probs.device()).reserve(out.numel());
  bernoulli_kernel[out.device()](out, 0.0, probs.contiguous(), st);
  return out;
}

Tensor randint(int64_t low, int64_t high, const Shape& shape, DType dtype, Device device, Generator* gen) {
  TT_CHECK(low < high, "random_: expects 'from' to be less than 'to', but got from=", low, " >= to=", high);
  TT_CHECK(dtype != DType::Bool || (low >= 0 && high <= 2), "randint: range [", low, ", ", high,
           ") does not fit dtype bool");
  Tensor out = Tensor::empty(shape, dtype, device);
  PhiloxState st = pick(gen, device).reserve(out.numel());
  randint_kernel[device](out, low, high, st);
  return out;
}

Tensor randperm(int64_t n, DType dtype, Device device, Generator* gen) {
  TT_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  Tensor keys = Tensor::empty({n}, DType::Int64, device);
  PhiloxState st = pick(gen, device).reserve(n);
  random_keys_kernel[device](keys, st);
  return argsort(keys, 0, false, true).to(dtype);  // ties (p ~ n^2 / 2^64) break by position
}

Tensor rand(const Shape& shape, DType dtype, Device device, Generator* gen) {
  Tensor t = Tensor::empty(shape, dtype, device);
  return uniform_(t, 0, 1, gen);
}

Tensor randn(const Shape& shape, DType dtype, Device device, Generator* gen) {
  Tensor t = Tensor::empty(shape, dtype, device);
  return normal_(t, 0, 1, gen);
}

}  // namespace tt
