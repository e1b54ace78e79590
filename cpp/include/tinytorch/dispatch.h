#pragma once
// The device x dtype dispatch table. Each kernel family has one KernelTable holding a
// function per device type; the dtype switch happens inside each device's kernel
// (TT_DISPATCH_* in dtype.h). Backends fill the tables from their own .cpp/.cu files with
// TT_REGISTER_KERNEL, so the CUDA library plugs in without touching CPU code.
#include <array>
#include "tinytorch/device.h"
#include "tinytorch/error.h"

namespace tt {

// The meta device's kernel for every family: nothing to compute, the op layer has already
// allocated the (storage-less) outputs. A family whose kernel returns host values (a count the op
// sizes its output by) registers a Meta kernel that throws instead.
template <class Fn>
struct MetaKernel;
template <class... Args>
struct MetaKernel<void (*)(Args...)> {
  static void run(Args...) {}
};

template <class Fn>
class KernelTable {
 public:
  // constexpr: tables are constant-initialized, so registrars in any file may run first.
  constexpr explicit KernelTable(const char* name) : name_(name), fns_{} {
    fns_[static_cast<int>(DeviceType::Meta)] = &MetaKernel<Fn>::run;
  }
  void set(DeviceType type, Fn fn) { fns_[static_cast<int>(type)] = fn; }
  bool has(DeviceType type) const { return fns_[static_cast<int>(type)] != nullptr; }
  Fn operator[](Device device) const {
    Fn fn = fns_[static_cast<int>(device.type)];
    if (!fn) throw NotImplementedError(str_cat(name_, ": no kernel for device ", device.str(),
                                               " (was tinytorch built with this backend?)"));
    return fn;
  }
  const char* name() const { return name_; }

 private:
  const char* name_;
  std::array<Fn, kNumDeviceTypes> fns_;
};

}  // namespace tt

// In a kernels/*.h header:  TT_DECLARE_KERNEL(unary, UnaryOp op, const Tensor& in, Tensor& out);
#define TT_DECLARE_KERNEL(NAME, ...)            \
  using NAME##_fn = void (*)(__VA_ARGS__);      \
  extern ::tt::KernelTable<NAME##_fn> NAME##_kernel;

// In exactly one .cpp (cpp/src/dispatch.cpp):  TT_DEFINE_KERNEL(unary)
#define TT_DEFINE_KERNEL(NAME) ::tt::KernelTable<NAME##_fn> NAME##_kernel(#NAME);

// In the backend's kernel file:  TT_REGISTER_KERNEL(unary, CPU, cpu_unary)
#define TT_REGISTER_KERNEL(NAME, DEVTYPE, FN)                                        \
  static const bool tt_registered_##NAME##_##DEVTYPE = [] {                          \
    ::tt::NAME##_kernel.set(::tt::DeviceType::DEVTYPE, FN);                          \
    return true;                                                                     \
  }();

// A family's kernels at once, each op NAME with the backend function PREFIX_NAME:
//   TT_REGISTER_KERNELS(CPU, cpu, softmax, softmax_backward)
// registers cpu_softmax and cpu_softmax_backward. Up to 12 ops per call.
#define TT_REGISTER_KERNELS(DEVTYPE, PREFIX, ...)                                                   \
  TT_EXPAND_(TT_PICK_13TH_(__VA_ARGS__, TT_REG_12_, TT_REG_11_, TT_REG_10_, TT_REG_9_, TT_REG_8_,      \
                           TT_REG_7_, TT_REG_6_, TT_REG_5_, TT_REG_4_, TT_REG_3_, TT_REG_2_, TT_REG_1_, ) \
             (DEVTYPE, PREFIX, __VA_ARGS__))

// The for-each behind TT_REGISTER_KERNELS; TT_EXPAND_ rescans for preprocessors that pass
// __VA_ARGS__ on as one argument.
#define TT_EXPAND_(X) X
#define TT_PICK_13TH_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, N, ...) N
#define TT_REG_1_(D, P, NAME) TT_REGISTER_KERNEL(NAME, D, P##_##NAME)
#define TT_REG_2_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_1_(D, P, __VA_ARGS__))
#define TT_REG_3_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_2_(D, P, __VA_ARGS__))
#define TT_REG_4_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_3_(D, P, __VA_ARGS__))
#define TT_REG_5_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_4_(D, P, __VA_ARGS__))
#define TT_REG_6_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_5_(D, P, __VA_ARGS__))
#define TT_REG_7_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_6_(D, P, __VA_ARGS__))
#define TT_REG_8_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_7_(D, P, __VA_ARGS__))
#define TT_REG_9_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_8_(D, P, __VA_ARGS__))
#define TT_REG_10_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_9_(D, P, __VA_ARGS__))
#define TT_REG_11_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_10_(D, P, __VA_ARGS__))
#define TT_REG_12_(D, P, NAME, ...) TT_REG_1_(D, P, NAME) TT_EXPAND_(TT_REG_11_(D, P, __VA_ARGS__))
