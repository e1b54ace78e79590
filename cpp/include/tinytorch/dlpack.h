#pragma once
// The DLPack data structures (https://github.com/dmlc/dlpack, ABI of dlpack.h v1.0), written
// out here rather than vendored: the struct layouts and enum values are the interchange ABI that
// numpy, PyTorch, CuPy and JAX exchange through "dltensor" / "dltensor_versioned" capsules.
#include <cstdint>

namespace tt::dlpack {

constexpr uint32_t kMajorVersion = 1;
constexpr uint32_t kMinorVersion = 0;

enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13 };
enum DataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 };

struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLDevice {
  int32_t device_type;  // DLDeviceType
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;   // DataTypeCode
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;    // (ndim,)
  int64_t* strides;  // (ndim,) in elements, or null for compact row-major
  uint64_t byte_offset;
};
// DLPack < 1.0: capsule name "dltensor", consumed -> "used_dltensor".
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
// DLPack >= 1.0: capsule name "dltensor_versioned", consumed -> "used_dltensor_versioned".
constexpr uint64_t kFlagReadOnly = 1ULL << 0;
constexpr uint64_t kFlagIsCopied = 1ULL << 1;
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};

}  // namespace tt::dlpack
