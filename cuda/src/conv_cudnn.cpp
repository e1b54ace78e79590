// conv2d forward/backward through cuDNN where the build found it (TINYTORCH_WITH_CUDNN); the op
// layer falls back to im2col + cuBLAS otherwise. Registers conv2d_direct(_backward) for CUDA.
//   x: (B, C, H, W), w: (O, C/groups, kh, kw), y/dy: (B, O, Ho, Wo), all contiguous, one dtype.
// Uses cuDNN's graph (backend) API, as PyTorch does: the legacy cudnnConvolution* calls rebuild
// an execution plan on every call in cuDNN 9 (~50-90 us of host time each), so here each problem's
// plan is built once from the heuristics' ranking and cached; a call only binds pointers and runs.
// As PyTorch's filters: no engine that down-converts inputs or reduces in reduced precision;
// float32 takes TF32 tensor cores only if tinytorch.backends.cudnn.allow_tf32; backward engines may
// be non-deterministic unless tinytorch.backends.cudnn.deterministic.
// With a bias, the forward graph is convolution -> pointwise ADD of the (1, O, 1, 1) bias (the conv
// output a virtual tensor: cuDNN's runtime-fusion engines), so y is written once; where no engine
// takes that graph, the plain convolution runs and the bias is added by the elementwise kernel.
// Engines: the heuristics' ranking (mode INSTANT, then the fallback list), filtered as above; the
// first that finalizes is used, or with tinytorch.backends.cudnn.benchmark every candidate is timed
// once per problem and the fastest cached (PyTorch's benchmark cache).
#include <atomic>
#include "tinytorch/error.h"
#include "tinytorch/cuda/blas.h"

namespace tt::cuda {
namespace {
std::atomic<bool> g_cudnn_enabled{true};         // tinytorch.backends.cudnn.enabled
std::atomic<bool> g_cudnn_deterministic{false};  // tinytorch.backends.cudnn.deterministic
std::atomic<bool> g_cudnn_benchmark{false};      // tinytorch.backends.cudnn.benchmark
// conv2d's bias: 0 always added after the convolution, 1 fused where timed faster (default),
// 2 fused wherever cuDNN has an engine (tests).
std::atomic<int> g_cudnn_fuse_bias{1};
}  // namespace
void set_cudnn_enabled(bool enabled) { g_cudnn_enabled.store(enabled); }
bool get_cudnn_enabled() { return g_cudnn_enabled.load(); }
void set_cudnn_deterministic(bool deterministic) { g_cudnn_deterministic.store(deterministic); }
bool get_cudnn_deterministic() { return g_cudnn_deterministic.load(); }
void set_cudnn_benchmark(bool benchmark) { g_cudnn_benchmark.store(benchmark); }
bool get_cudnn_benchmark() { return g_cudnn_benchmark.load(); }
void set_cudnn_fuse_bias(int mode) {
  TT_CHECK(mode >= 0 && mode <= 2, "set_cudnn_fuse_bias: mode must be 0 (never), 1 (where faster) or 2 (always), got ",
           mode);
  g_cudnn_fuse_bias.store(mode);
}
}  // namespace tt::cuda

#ifdef TINYTORCH_WITH_CUDNN
#include <cudnn.h>
#include <array>
#include <climits>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>
#include "cudnn_backend.h"
#include "tinytorch/cuda/common.h"
#include "tinytorch/kernels/conv.h"
#include "tinytorch/kernels/elementwise.h"

// The plan's and the operation graph's HANDLE attributes are deprecated in newer cuDNN 9 headers
// but required by the cuDNN 9 libraries before them.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace tt::cuda {
namespace {

cudnnDataType_t cudnn_dtype(DType d) {
  switch (d) {
    case DType::Float32: return CUDNN_DATA_FLOAT;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    default: throw_unsupported_dtype("conv2d (cuDNN)", d);
  }
}

int64_t alignment(const Tensor& t) {
  const auto p = reinterpret_cast<uintptr_t>(t.data_ptr());
  for (int64_t a : {16, 8, 4, 2})
    if (p % a == 0) return a;
  return 1;
}

// A tensor descriptor: dims with contiguous (NCHW) strides; virtual = an intermediate of a graph
// that never reaches memory.
using DescPtr = std::shared_ptr<Desc>;
using Dims = std::array<int64_t, 4>;
DescPtr make_desc(cudnnBackendDescriptorType_t type) { return std::make_shared<Desc>(type); }

DescPtr tensor_desc(int64_t uid, const Dims& dims, cudnnDataType_t dt, int64_t align, bool is_virtual = false) {
  DescPtr d = make_desc(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const int64_t strides[4] = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
  d->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dt)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4)
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides, 4)
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &align)
      .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &is_virtual)
      .finalize();
  return d;
}

Dims dims_of(const Tensor& t) { return {t.size(0), t.size(1), t.size(2), t.size(3)}; }
DescPtr tensor_desc(int64_t uid, const Tensor& t) {
  return tensor_desc(uid, dims_of(t), cudnn_dtype(t.dtype()), alignment(t));
}

// kForwardBias: y = conv(x, w) + b in one graph.
enum Pass { kForward = 0, kBackwardData = 1, kBackwardFilter = 2, kForwardBias = 3 };
constexpr int64_t kUidX = 'x', kUidW = 'w', kUidY = 'y', kUidB = 'b', kUidConv = 'c';

// A finalized execution plan, the workspace it needs, and the descriptors it was built from
// (kept alive with it, as cudnn-frontend does).
struct Plan {
  DescPtr plan;
  int64_t workspace = 0;
  std::vector<DescPtr> parts;
  int64_t engine = -1;  // the engine's global index, and its time where benchmarked (for cudnn_plans())
  float ms = -1;
  // kForwardBias: -1 not yet timed, else whether the fused graph beat convolution + bias kernel
  // (their times in ms_fused, ms_unfused).
  int faster = -1;
  float ms_fused = -1, ms_unfused = -1;
};

// The tensors one execution binds, by unique id.
struct Binding {
  std::vector<int64_t> uids;
  std::vector<void*> ptrs;
};

// The numerical notes of an engine config's engine.
std::vector<cudnnBackendNumericalNote_t> notes_of(const Desc& cfg) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t n = 0;
  TT_CUDNN_CHECK(cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                          &n, &e));
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  TT_CUDNN_CHECK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                          notes.size(), &n, notes.data()));
  return {notes.begin(), notes.begin() + n};
}

int64_t engine_index(const Desc& cfg) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t n = 0, index = -1;
  TT_CUDNN_CHECK(cudnnBackendGetAttribute(cfg.get(), CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                          &n, &e));
  TT_CUDNN_CHECK(cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index));
  return index;
}

bool acceptable(const Desc& cfg, cudnnDataType_t dt, bool tf32, bool deterministic) {
  for (auto note : notes_of(cfg)) {
    if (note == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) return false;
    if (note == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION) return false;
    if (note == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC && deterministic) return false;
    if (note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE && dt == CUDNN_DATA_FLOAT && !tf32) return false;
  }
  return true;
}

void set_scale(Desc& op, cudnnBackendAttributeName_t name, cudnnDataType_t dt, double v) {
  if (dt == CUDNN_DATA_DOUBLE) {
    op.set(name, CUDNN_TYPE_DOUBLE, &v);
  } else {
    const float f = static_cast<float>(v);
    op.set(name, CUDNN_TYPE_FLOAT, &f);
  }
}

// The finalized operation graph of one pass (last element; the rest are its parts), or empty
// where cuDNN can't take it. (x, w, y) name the pass's tensors as in execute(); b: (O) for kForwardBias.
std::vector<DescPtr> make_graph(cudnnHandle_t h, Pass pass, const Tensor& x, const Tensor& w, const Tensor& y,
                                const Tensor& b, const Conv2dParams& p) {
  const cudnnDataType_t dt = cudnn_dtype(x.dtype());
  const cudnnDataType_t compute = dt == CUDNN_DATA_DOUBLE ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  DescPtr xd = tensor_desc(kUidX, x), wd = tensor_desc(kUidW, w), yd = tensor_desc(kUidY, y);
  std::vector<DescPtr> parts{xd, wd, yd};
  DescPtr conv_p = make_desc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  parts.push_back(conv_p);
  const int64_t spatial = 2, pads[2] = {p.ph, p.pw}, strides[2] = {p.sh, p.sw}, dil[2] = {p.dh, p.dw};
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  conv_p->set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
      .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode)
      .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial)
      .set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pads, 2)
      .set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, pads, 2)
      .set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, strides, 2)
      .set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dil, 2)
      .finalize();

  // Groups are implied by w's second dimension (C / groups).
  static constexpr struct {
    cudnnBackendDescriptorType_t op;
    cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
  } kOps[3] = {
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA},
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA},
      {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
       CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA},
  };
  const bool fused = pass == kForwardBias;
  const auto& k = kOps[fused ? kForward : pass];
  // The fused graph's convolution writes a virtual float tensor (y's shape) that the ADD reads.
  DescPtr conv_out = fused ? tensor_desc(kUidConv, dims_of(y), compute, 16, true) : yd;
  DescPtr op_p = make_desc(k.op);
  parts.push_back(conv_out);
  parts.push_back(op_p);
  op_p->set_desc(k.x, *xd).set_desc(k.w, *wd).set_desc(k.y, *conv_out).set_desc(k.conv, *conv_p);
  set_scale(*op_p, k.alpha, dt, 1.0);
  set_scale(*op_p, k.beta, dt, 0.0);
  if (!op_p->try_finalize()) return {};
  std::vector<cudnnBackendDescriptor_t> ops{op_p->get()};
  if (fused) {
    // y = conv_out + b, b: (1, O, 1, 1) broadcast over batch and space.
    DescPtr bd = tensor_desc(kUidB, Dims{1, b.size(0), 1, 1}, dt, alignment(b));
    DescPtr add_p = make_desc(CUDNN_BACKEND_POINTWISE_DESCRIPTOR), pw_p = make_desc(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    const cudnnPointwiseMode_t add = CUDNN_POINTWISE_ADD;
    add_p->set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &add)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &compute);
    if (!add_p->try_finalize()) return {};
    const float one = 1;
    pw_p->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, *add_p)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, *conv_out)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *bd)
        .set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, *yd)
        .set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, &one)
        .set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, &one);
    if (!pw_p->try_finalize()) return {};
    parts.insert(parts.end(), {bd, add_p, pw_p});
    ops.push_back(pw_p->get());
  }

  DescPtr graph_p = make_desc(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph_p->set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops.data(), ops.size())
      .set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &h);
  if (!graph_p->try_finalize()) return {};
  parts.push_back(graph_p);
  return parts;
}

// Runs a plan with the given tensors bound; cuDNN's status (no throw where it refuses).
cudnnStatus_t try_execute(cudnnHandle_t h, const Plan& plan, const Binding& bind, Device dev) {
  Tensor ws = Tensor::empty({std::max<int64_t>(plan.workspace, 1)}, DType::UInt8, dev);
  void* wsp = ws.data_ptr();
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, bind.ptrs.data(), bind.ptrs.size())
      .set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, bind.uids.data(), bind.uids.size())
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &wsp)
      .finalize();
  return cudnnBackendExecute(h, plan.plan->get(), pack.get());
}

float time_plan(cudnnHandle_t h, const Plan& plan, const Binding& bind, Device dev, cudaStream_t stream) {
  return time_ms(stream, [&] { return try_execute(h, plan, bind, dev) == CUDNN_STATUS_SUCCESS; });
}

// Builds the plan for one pass of one problem from the engine configs in the heuristics' order
// (mode INSTANT, then the fallback list's) that pass the filters, finalize and need at most 2 GiB
// of workspace: the first, or with `benchmark` the fastest on these tensors (a graph capture in
// progress can't be timed: the first then). No plan (empty) means cuDNN can't take the problem.
Plan build_plan(cudnnHandle_t h, Pass pass, const Tensor& x, const Tensor& w, const Tensor& y, const Tensor& b,
                const Conv2dParams& p, const Binding& bind, bool benchmark) {
  const cudnnDataType_t dt = cudnn_dtype(x.dtype());
  const bool tf32 = get_conv_allow_tf32();
  const bool deterministic = (pass == kBackwardData || pass == kBackwardFilter) && get_cudnn_deterministic();
  std::vector<DescPtr> parts = make_graph(h, pass, x, w, y, b, p);
  if (parts.empty()) return {};
  const Desc& graph = *parts.back();
  cudaStream_t stream = current_stream(x.device().index);
  benchmark = benchmark && !capturing(stream);

  Plan best;
  float best_ms = std::numeric_limits<float>::infinity();
  for (cudnnBackendHeurMode_t heur_mode : {CUDNN_HEUR_MODE_INSTANT, CUDNN_HEUR_MODE_FALLBACK}) {
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
        .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &heur_mode);
    if (!heur.try_finalize()) continue;
    int64_t count = 0;
    if (cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                 nullptr) != CUDNN_STATUS_SUCCESS || count <= 0)
      continue;
    std::vector<DescPtr> cfgs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      cfgs.push_back(make_desc(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(cfgs.back()->get());
    }
    TT_CUDNN_CHECK(cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                            count, &count, raw.data()));
    for (int64_t i = 0; i < count; ++i) {
      if (!acceptable(*cfgs[i], dt, tf32, deterministic)) continue;
      DescPtr plan = make_desc(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &h).set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                                                                  *cfgs[i]);
      if (!plan->try_finalize()) continue;
      int64_t ws = 0, n = 0;
      TT_CUDNN_CHECK(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                              1, &n, &ws));
      if (ws > (int64_t(1) << 31)) continue;  // 2 GiB of workspace at most
      std::vector<DescPtr> kept = parts;
      kept.push_back(cfgs[i]);
      Plan cand{plan, ws, std::move(kept), engine_index(*cfgs[i])};
      if (!benchmark) return cand;
      cand.ms = time_plan(h, cand, bind, x.device(), stream);
      if (cand.ms < best_ms) best_ms = cand.ms, best = std::move(cand);
    }
  }
  return best;
}

// Plans per problem: pass, dtype, sizes, parameters, alignments and switches. Per thread, as the
// handles the plans were built with.
using Key = std::tuple<int, int, std::array<int64_t, 8>, std::array<int64_t, 8>, std::array<int64_t, 5>,
                       std::array<bool, 3>>;

std::map<Key, Plan>& thread_plans() {
  thread_local std::map<Key, Plan> plans;
  return plans;
}

Plan& plan_for(cudnnHandle_t h, Pass pass, const Tensor& x, const Tensor& w, const Tensor& y, const Tensor& b,
               const Conv2dParams& p, const Binding& bind) {
  std::map<Key, Plan>& plans = thread_plans();
  const bool benchmark = get_cudnn_benchmark();
  const Key key{pass,
                static_cast<int>(x.dtype()),
                {x.size(0), x.size(1), x.size(2), x.size(3), w.size(0), w.size(1), w.size(2), w.size(3)},
                {p.kh, p.kw, p.sh, p.sw, p.ph, p.pw, p.dh, p.dw},
                {x.device().index, alignment(x), alignment(w), alignment(y), b.defined() ? alignment(b) : 0},
                {get_conv_allow_tf32(), pass != kForward && pass != kForwardBias && get_cudnn_deterministic(),
                 benchmark}};
  auto it = plans.find(key);
  if (it == plans.end()) it = plans.emplace(key, build_plan(h, pass, x, w, y, b, p, bind, benchmark)).first;
  return it->second;
}

void execute(cudnnHandle_t h, const Plan& plan, const Binding& bind, Device dev) {
  TT_CUDNN_CHECK(try_execute(h, plan, bind, dev));
}

Binding bind3(const Tensor& x, const Tensor& w, const Tensor& y) {
  return {{kUidX, kUidW, kUidY}, {x.data_ptr(), w.data_ptr(), y.data_ptr()}};
}

bool fits_int(std::initializer_list<int64_t> vs) {
  for (int64_t v : vs)
    if (v > INT_MAX) return false;
  return true;
}

void add_bias(const Tensor& out, const Tensor& bias) {
  binary_kernel[out.device()](BinaryOp::Add, out, bias.view({1, bias.size(0), 1, 1}), out, OpScalars{1.0, 0.0});
}

// out = conv(x, w) (+ bias). Sets handled = false (and does nothing) where cuDNN can't take it.
// With a bias, the fused graph (runtime fusion: no float64 engines) runs where it has an engine and
// (mode 1) was faster than the plain convolution + the bias kernel when this problem was first
// seen outside a graph capture (timed then, once: a fused engine compiled at run time may lose).
void cudnn_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p,
                  int64_t /*groups: w.size(1)*/, const Tensor& out, bool& handled) {
  handled = false;
  if (!get_cudnn_enabled() || !fits_int({x.numel(), out.numel(), w.numel()})) return;
  DeviceGuard guard(x.device());
  cudnnHandle_t h = handle_for(x.device().index);
  const Binding bind = bind3(x, w, out);
  const int fuse = bias.defined() && x.dtype() != DType::Float64 ? g_cudnn_fuse_bias.load() : 0;
  if (fuse) {
    Binding fbind = bind;
    fbind.uids.push_back(kUidB), fbind.ptrs.push_back(bias.data_ptr());
    Plan& fused = plan_for(h, kForwardBias, x, w, out, bias, p, fbind);
    cudaStream_t stream = current_stream(x.device().index);
    if (fused.plan && fuse == 1 && fused.faster < 0 && !capturing(stream)) {
      const Plan& plain = plan_for(h, kForward, x, w, out, Tensor(), p, bind);
      fused.ms_fused = time_plan(h, fused, fbind, x.device(), stream);
      fused.ms_unfused = plain.plan ? time_ms(stream, [&] {
        if (try_execute(h, plain, bind, x.device()) != CUDNN_STATUS_SUCCESS) return false;
        add_bias(out, bias);
        return true;
      }) : std::numeric_limits<float>::infinity();
      fused.faster = fused.ms_fused < std::numeric_limits<float>::infinity() && fused.ms_fused <= fused.ms_unfused;
    }
    if (fused.plan && (fuse == 2 || fused.faster == 1)) {
      execute(h, fused, fbind, x.device());
      handled = true;
      return;
    }
  }
  const Plan& plan = plan_for(h, kForward, x, w, out, Tensor(), p, bind);
  if (!plan.plan) return;
  execute(h, plan, bind, x.device());
  if (bias.defined()) add_bias(out, bias);
  handled = true;
}

// gx = conv2d's input gradient, gw = its weight gradient, each only where defined.
void cudnn_conv2d_backward(const Tensor& go, const Tensor& x, const Tensor& w, const Conv2dParams& p,
                           int64_t /*groups*/, const Tensor& gx, const Tensor& gw, bool& handled) {
  handled = false;
  if (!get_cudnn_enabled() || !fits_int({x.numel(), go.numel(), w.numel()})) return;
  DeviceGuard guard(x.device());
  // Both plans first, so that an unsupported pass leaves everything to the fallback.
  cudnnHandle_t h = handle_for(x.device().index);
  const Binding data_bind = gx.defined() ? bind3(gx, w, go) : Binding{};
  const Binding filter_bind = gw.defined() ? bind3(x, gw, go) : Binding{};
  const Plan* data = gx.defined() ? &plan_for(h, kBackwardData, gx, w, go, Tensor(), p, data_bind) : nullptr;
  const Plan* filter = gw.defined() ? &plan_for(h, kBackwardFilter, x, gw, go, Tensor(), p, filter_bind) : nullptr;
  if ((data && !data->plan) || (filter && !filter->plan)) return;
  if (data) execute(h, *data, data_bind, x.device());
  if (filter) execute(h, *filter, filter_bind, x.device());
  handled = true;
}

}  // namespace

TT_REGISTER_KERNEL(conv2d_direct, CUDA, cudnn_conv2d)
TT_REGISTER_KERNEL(conv2d_direct_backward, CUDA, cudnn_conv2d_backward)

int cudnn_version() { return static_cast<int>(cudnnGetVersion()); }

std::vector<std::string> cudnn_plans() {
  static constexpr const char* kPass[] = {"forward", "backward_data", "backward_filter", "forward+bias"};
  std::vector<std::string> lines;
  for (const auto& [key, plan] : thread_plans()) {
    const auto& s = std::get<2>(key);
    lines.push_back(str_cat(kPass[std::get<0>(key)], " ", dtype_name(static_cast<DType>(std::get<1>(key))), " x (",
                            s[0], ", ", s[1], ", ", s[2], ", ", s[3], ") w (", s[4], ", ", s[5], ", ", s[6], ", ", s[7],
                            "): ", plan.plan ? str_cat("engine ", plan.engine, ", workspace ", plan.workspace,
                                                       plan.ms >= 0 ? str_cat(", ", plan.ms, " ms") : "",
                                                       plan.faster >= 0 ? str_cat(", fused ", plan.ms_fused,
                                                                                  " ms vs unfused ", plan.ms_unfused,
                                                                                  " ms") : "")
                                             : std::string("no engine")));
  }
  return lines;
}

}  // namespace tt::cuda
#else
namespace tt::cuda {
int cudnn_version() { return 0; }
std::vector<std::string> cudnn_plans() { return {}; }
}  // namespace tt::cuda
#endif  // TINYTORCH_WITH_CUDNN
