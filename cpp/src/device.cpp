#include "tinytorch/device.h"
#include "tinytorch/error.h"

namespace tt {

Device::Device(const std::string& spec) {
  auto colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  if (kind == "cpu") type = DeviceType::CPU;
  else if (kind == "cuda") type = DeviceType::CUDA;
  else if (kind == "meta") type = DeviceType::Meta;
  else throw std::runtime_error(str_cat("Expected one of cpu, cuda, meta device type at start of device string: ", spec));
  index = 0;
  if (colon != std::string::npos) {
    try {
      size_t used = 0;
      index = std::stoi(spec.substr(colon + 1), &used);
      if (used != spec.size() - colon - 1 || index < 0) throw std::invalid_argument(spec);
    } catch (const std::logic_error&) {
      throw std::runtime_error(str_cat("Invalid device string: '", spec, "'"));
    }
  }
}

std::string Device::str() const {
  switch (type) {
    case DeviceType::CPU: return "cpu";
    case DeviceType::Meta: return "meta";
    default: return str_cat("cuda:", index);
  }
}

}  // namespace tt
