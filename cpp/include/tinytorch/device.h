#pragma once
#include <string>

namespace tt {

// Meta: tensors with a shape and a dtype but no storage (their kernels only allocate outputs),
// to build a large model without memory and materialize it later (Module.to_empty).
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 2 };
constexpr int kNumDeviceTypes = 3;

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  Device() = default;
  Device(DeviceType t, int i = 0) : type(t), index(i) {}
  explicit Device(const std::string& spec);  // "cpu", "cuda", "cuda:1", "meta"
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool is_meta() const { return type == DeviceType::Meta; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const;  // "cpu", "cuda:0", "meta"
};

}  // namespace tt
