// tinytorch._cuda: the CUDA backend's Python face. Importing it loads libtinytorch_cuda, whose
// kernels register themselves into the core dispatch tables, and installs the caching allocator.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <cuda_runtime.h>
#include "tinytorch/cuda/allocator.h"
#include "tinytorch/cuda/blas.h"
#include "tinytorch/cuda/common.h"
#include "tinytorch/cuda/graph.h"
#include "tinytorch/cuda/nccl.h"
#include "tinytorch/cuda/pinned.h"

namespace py = pybind11;
using namespace tt;
using namespace tt::cuda;

namespace {

// A stream handle; owns the stream when created here, borrows it otherwise.
struct Stream {
  cudaStream_t stream = nullptr;
  int device = 0;
  bool owned = false;
  Stream(int dev, int priority) : device(dev), owned(true) {
    DeviceGuard g(dev);
    TT_CUDA_CHECK(cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, priority));
  }
  Stream(cudaStream_t s, int dev) : stream(s), device(dev) {}
  ~Stream() {
    if (owned) destroy_stream(stream);  // tensors may still be recorded on it
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

struct Event {
  cudaEvent_t event = nullptr;
  int device = -1;
  bool timing;
  explicit Event(bool enable_timing) : timing(enable_timing) {}
  ~Event() {
    if (event) cudaEventDestroy(event);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& s) {
    DeviceGuard g(s.device);
    if (!event) {
      TT_CUDA_CHECK(cudaEventCreateWithFlags(&event, timing ? cudaEventDefault : cudaEventDisableTiming));
      device = s.device;
    }
    TT_CUDA_CHECK(cudaEventRecord(event, s.stream));
  }
};

// A reference to a CUDA graph memory pool (graph_pool_handle(), CUDAGraph.pool()): keeps the pool
// alive so that later captures can share it.
struct GraphPoolHandle {
  uint64_t id;
  explicit GraphPoolHandle(uint64_t pool, bool retain) : id(pool) {
    if (retain) retain_graph_pool(pool);
  }
  ~GraphPoolHandle() { release_graph_pool(id); }
  GraphPoolHandle(const GraphPoolHandle&) = delete;
  GraphPoolHandle& operator=(const GraphPoolHandle&) = delete;
};

}  // namespace

PYBIND11_MODULE(_cuda, m) {
  py::module_::import("tinytorch._C");  // TensorImpl and the error types
  install_caching_allocator();

  m.def("device_count", &device_count);
  m.def("current_device", &current_device);
  m.def("set_device", &set_device);
  m.def("synchronize", [](int dev) {
    DeviceGuard g(dev);
    check_not_capturing(dev, "tinytorch.cuda.synchronize()");
    py::gil_scoped_release nogil;
    TT_CUDA_CHECK(cudaDeviceSynchronize());
  });
  m.def("get_device_name", [](int dev) {
    check_device_index(dev, "get_device_name");
    cudaDeviceProp prop{};
    TT_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    return std::string(prop.name);
  });
  m.def("get_device_capability", [](int dev) {
    check_device_index(dev, "get_device_capability");
    cudaDeviceProp prop{};
    TT_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    return py::make_tuple(prop.major, prop.minor);
  });
  m.def("mem_get_info", [](int dev) {
    DeviceGuard g(dev);
    size_t free_b = 0, total_b = 0;
    TT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return py::make_tuple(free_b, total_b);
  });

  m.def("memory_stats", [](int dev) {
    MemoryStats s = memory_stats(dev);
    py::dict d;
    d["allocated_bytes.all.current"] = s.allocated;
    d["allocated_bytes.all.peak"] = s.max_allocated;
    d["reserved_bytes.all.current"] = s.reserved;
    d["reserved_bytes.all.peak"] = s.max_reserved;
    d["num_device_alloc"] = s.num_mallocs;
    d["num_device_free"] = s.num_frees;
    return d;
  });
  m.def("reset_peak_memory_stats", &reset_peak_memory_stats);
  m.def("empty_cache", &empty_cache);
  // tinytorch.backends.cuda.matmul.allow_tf32 (float32 GEMMs on TF32 tensor cores; default off).
  m.def("set_allow_tf32", &set_allow_tf32, py::arg("allow"));
  m.def("get_allow_tf32", &get_allow_tf32);
  // tinytorch.backends.cudnn.allow_tf32 (convolutions' float32 GEMMs on TF32; default on, as PyTorch).
  m.def("set_conv_allow_tf32", &set_conv_allow_tf32, py::arg("allow"));
  m.def("get_conv_allow_tf32", &get_conv_allow_tf32);
  m.def("cudnn_version", &cudnn_version);
  m.def("set_cudnn_enabled", &set_cudnn_enabled, py::arg("enabled"));
  m.def("get_cudnn_enabled", &get_cudnn_enabled);
  m.def("set_cudnn_deterministic", &set_cudnn_deterministic, py::arg("deterministic"));
  m.def("get_cudnn_deterministic", &get_cudnn_deterministic);
  m.def("set_cudnn_benchmark", &set_cudnn_benchmark, py::arg("benchmark"));
  m.def("get_cudnn_benchmark", &get_cudnn_benchmark);
  m.def("cudnn_plans", &cudnn_plans);
  m.def("set_cudnn_fuse_bias", &set_cudnn_fuse_bias, py::arg("mode"));

  py::class_<Stream>(m, "Stream")
      .def(py::init<int, int>(), py::arg("device"), py::arg("priority") = 0)
      .def_readonly("device", &Stream::device)
      .def_property_readonly("cuda_stream", [](const Stream& s) { return reinterpret_cast<uintptr_t>(s.stream); })
      .def("synchronize", [](const Stream& s) {
        check_not_capturing(s.device, "Stream.synchronize()");
        py::gil_scoped_release nogil;
        TT_CUDA_CHECK(cudaStreamSynchronize(s.stream));
      })
      .def("query", [](const Stream& s) {
        cudaError_t e = cudaStreamQuery(s.stream);
        if (e == cudaErrorNotReady) { cudaGetLastError(); return false; }
        TT_CUDA_CHECK(e);
        return true;
      })
      .def("wait_event", [](const Stream& s, const Event& e) {
        if (e.event) TT_CUDA_CHECK(cudaStreamWaitEvent(s.stream, e.event, 0));
      });
  m.def("current_stream", [](int dev) { return std::make_unique<Stream>(current_stream(dev), dev); });
  m.def("set_current_stream", [](const Stream& s) { set_current_stream(s.device, s.stream); });
  m.def("set_current_stream_ptr", [](int dev, uintptr_t ptr) {
    set_current_stream(dev, reinterpret_cast<cudaStream_t>(ptr));
  });

  py::class_<Event>(m, "Event")
      .def(py::init<bool>(), py::arg("enable_timing") = false)
      .def("record", &Event::record)
      .def("synchronize", [](const Event& e) {
        if (!e.event) return;
        if (e.device >= 0) check_not_capturing(e.device, "Event.synchronize()");
        py::gil_scoped_release nogil;
        TT_CUDA_CHECK(cudaEventSynchronize(e.event));
      })
      .def("query", [](const Event& e) {
        if (!e.event) return true;
        cudaError_t err = cudaEventQuery(e.event);
        if (err == cudaErrorNotReady) { cudaGetLastError(); return false; }
        TT_CUDA_CHECK(err);
        return true;
      })
      .def("elapsed_time", [](const Event& a, const Event& b) {
        TT_CHECK(a.event && b.event, "elapsed_time: both events must be recorded first");
        float ms = 0;
        TT_CUDA_CHECK(cudaEventElapsedTime(&ms, a.event, b.event));
        return ms;
      });

  // CUDA graphs (tinytorch/cuda/graphs.py)
  py::class_<GraphPoolHandle>(m, "GraphPoolHandle")
      .def(py::init([] { return std::make_unique<GraphPoolHandle>(create_graph_pool(), false); }))
      .def_readonly("id", &GraphPoolHandle::id);
  py::class_<CudaGraph>(m, "CUDAGraph")
      .def(py::init<>())
      .def("capture_begin", &CudaGraph::capture_begin, py::arg("pool") = 0, py::arg("capture_error_mode") = "global")
      .def("capture_end", &CudaGraph::capture_end)
      .def("abort_capture", &CudaGraph::abort_capture)
      .def("replay", &CudaGraph::replay)
      .def("reset", &CudaGraph::reset)
      .def("capturing", &CudaGraph::capturing)
      .def("pool", [](const CudaGraph& g) { return std::make_unique<GraphPoolHandle>(g.pool(), true); });
  m.def("is_current_stream_capturing", &is_current_stream_capturing, py::arg("device"));
  m.def("graph_pool_is_live", &graph_pool_is_live, py::arg("id"));

  m.def("pin_memory", &pin_memory);
  m.def("is_pinned", &is_pinned);
  m.def("record_stream", [](const Tensor& t, const Stream& s) { record_stream(t.storage()->data(), s.stream); });

#ifdef TINYTORCH_WITH_NCCL  // tinytorch.distributed's nccl backend (tinytorch/cuda/nccl.h)
  using nogil = py::call_guard<py::gil_scoped_release>;
  m.def("nccl_unique_id", [] { return py::bytes(nccl_unique_id()); });
  m.def("nccl_version", &nccl_version);
  py::class_<NcclWork, std::shared_ptr<NcclWork>>(m, "NcclWork")
      .def("query", &NcclWork::query, nogil()).def("wait", &NcclWork::wait).def("synchronize", &NcclWork::synchronize, nogil());
  py::class_<NcclComm, std::shared_ptr<NcclComm>>(m, "NcclComm")
      .def(py::init([](py::bytes id, int n, int r, int d) { std::string s = id; py::gil_scoped_release g;
                      return std::make_shared<NcclComm>(s, n, r, d); }))
      .def("all_reduce", &NcclComm::all_reduce, nogil()).def("broadcast", &NcclComm::broadcast, nogil())
      .def("reduce", &NcclComm::reduce, nogil()).def("all_gather", &NcclComm::all_gather, nogil())
      .def("reduce_scatter", &NcclComm::reduce_scatter, nogil()).def("send", &NcclComm::send, nogil())
      .def("recv", &NcclComm::recv, nogil()).def("abort", &NcclComm::abort, nogil())
      .def("destroy", &NcclComm::destroy, nogil()).def("async_error", &NcclComm::async_error, nogil());
#endif
}
