// CUDA indexing kernels: advanced-index offsets, index/index_put, gather/scatter, masked_fill,
// count_nonzero/nonzero. Same semantics as cpp/src/cpu/index.cpp, except that index values are
// checked with TT_CUDA_KERNEL_ASSERT (a device-side assert) instead of raising IndexError.
//
// Accumulation (index_put_ with accumulate=True, scatter_add) is deterministic and bit-equal to
// the CPU's serial loop: every position i of the iteration gets the key dest(i) (its destination
// element), a stable radix sort on the key groups equal destinations while keeping the positions
// in increasing order, and one thread per group then adds the group's values in that order,
// rounding to the element type after each add exactly as the CPU does. No atomics.
#include <cub/cub.cuh>
#include "tinytorch/cuda/graph.h"
#include "tinytorch/cuda/device_assert.cuh"
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/host_wait.h"
#include "tinytorch/kernels/index.h"

namespace tt::cuda {
namespace {

// A view of t's memory over `shape`, keeping t's strides except `zero_dim` (stride 0).
Tensor restride_to(const Tensor& t, const Shape& shape, int64_t zero_dim) {
  Shape strides = t.strides();
  if (zero_dim >= 0) strides[zero_dim] = 0;
  return Tensor(t.storage(), shape, strides, t.offset(), t.dtype());
}

__device__ __forceinline__ int64_t wrap_checked(int64_t v, int64_t size) {
  TT_CUDA_KERNEL_ASSERT(v >= -size && v < size);
  return v < 0 ? v + size : v;
}

// gather/scatter/scatter_add: no wrapping (PyTorch rejects negative indices there).
__device__ __forceinline__ int64_t bounds_checked(int64_t v, int64_t size) {
  TT_CUDA_KERNEL_ASSERT(v >= 0 && v < size);
  return v;
}

// ---------------------------------------------------------------- index_offsets

struct OffsetsArgs {
  const int64_t* ix[kMaxDims];
  int64_t size[kMaxDims], stride[kMaxDims];
  int k;
};

// indices[k]: (B) contiguous int64 -> offsets: (B) = sum_k wrap(indices[k]) * strides[k]
__global__ void index_offsets_kernel(int64_t n, OffsetsArgs a, int64_t* off) {
  TT_GRID_STRIDE(i, n) {
    int64_t o = 0;
    for (int k = 0; k < a.k; ++k) o += wrap_checked(a.ix[k][i], a.size[k]) * a.stride[k];
    off[i] = o;
  }
}

void cuda_index_offsets(const std::vector<Tensor>& indices, const std::vector<int64_t>& /*dims*/,
                        const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                        const Tensor& offsets) {
  const int64_t n = offsets.numel();
  TT_CHECK(indices.size() <= size_t(kMaxDims), "index: at most ", kMaxDims, " index tensors are supported");
  if (n == 0) return;
  OffsetsArgs a;
  a.k = static_cast<int>(indices.size());
  for (int k = 0; k < a.k; ++k) {
    a.ix[k] = indices[k].data<int64_t>();
    a.size[k] = sizes[k];
    a.stride[k] = strides[k];
  }
  DeviceGuard guard(offsets.device());
  index_offsets_kernel<<<grid_for(n), kThreads, 0, current_stream(offsets.device().index)>>>(
      n, a, offsets.data<int64_t>());
  TT_CUDA_KERNEL_CHECK();
}

// ---------------------------------------------------------------- index / index_put (no accumulate)

// out, src, offsets: one shape (src/offsets with stride-0 dims) -> out[i] = src[i + offsets[i]]
template <class U>
__global__ void index_kernel(int64_t n, OffsetCalc<3> oc, Pointers<3> p) {
  TT_GRID_STRIDE(i, n) {
    int64_t off[3];
    oc.offsets(i, off);
    const int64_t o = *reinterpret_cast<const int64_t*>(p.p[2] + off[2]);
    *reinterpret_cast<U*>(p.p[0] + off[0]) = reinterpret_cast<const U*>(p.p[1] + off[1])[o];
  }
}

void cuda_index(const Tensor& src, const Tensor& offsets, const Tensor& out) {
  IterGeometry<3> g({&out, &src, &offsets});
  if (g.numel == 0) return;
  DeviceGuard guard(out.device());
  cudaStream_t stream = current_stream(out.device().index);
  dispatch_bytes(out.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    index_kernel<U><<<grid_for(g.numel), kThreads, 0, stream>>>(g.numel, OffsetCalc<3>(g), pointers_of(g));
  });
  TT_CUDA_KERNEL_CHECK();
}

// dst, offsets, values: one shape -> dst[i + offsets[i]] = values[i]; duplicates: any write wins
template <class U>
__global__ void index_put_kernel(int64_t n, OffsetCalc<3> oc, Pointers<3> p) {
  TT_GRID_STRIDE(i, n) {
    int64_t off[3];
    oc.offsets(i, off);
    const int64_t o = *reinterpret_cast<const int64_t*>(p.p[1] + off[1]);
    reinterpret_cast<U*>(p.p[0] + off[0])[o] = *reinterpret_cast<const U*>(p.p[2] + off[2]);
  }
}

// ---------------------------------------------------------------- deterministic accumulation

// Where position i of an accumulation goes. Operands: 0 the destination (restrided to the
// iteration shape), 1 the int64 index (element offsets for index_put, raw indices along `dim`
// for scatter_add), 2 the values.
struct AccumMap {
  OffsetCalc<3> oc;
  Pointers<3> p;
  int64_t itemsize;
  int64_t size;    // scatter: the size of dim (indices are checked in [0, size)); 0 for index_put
  int64_t stride;  // scatter: the element stride of dim

  __device__ __forceinline__ int64_t dest(int64_t i, int64_t& value_off) const {
    int64_t off[3];
    oc.offsets(i, off);
    value_off = off[2];
    const int64_t v = *reinterpret_cast<const int64_t*>(p.p[1] + off[1]);
    return off[0] / itemsize + (size ? bounds_checked(v, size) * stride : v);
  }
};

// keys[i] = destination element of position i, pos[i] = i
__global__ void accum_keys_kernel(int64_t n, AccumMap m, uint64_t* keys, int64_t* pos) {
  TT_GRID_STRIDE(i, n) {
    int64_t voff;
    keys[i] = static_cast<uint64_t>(m.dest(i, voff));
    pos[i] = i;
  }
}

// keys/pos sorted by key (positions ascending within a key): the first thread of each run of
// equal keys adds the run's values into dst[key] in position order, rounding like the CPU.
template <class T>
__global__ void accum_runs_kernel(int64_t n, const uint64_t* keys, const int64_t* pos, AccumMap m) {
  using M = opmath_t<T>;
  T* dst = reinterpret_cast<T*>(m.p.p[0]);
  TT_GRID_STRIDE(j, n) {
    const uint64_t k = keys[j];
    if (j > 0 && keys[j - 1] == k) continue;
    T acc = dst[k];
    for (int64_t q = j; q < n && keys[q] == k; ++q) {
      int64_t voff;
      m.dest(pos[q], voff);
      acc = T(M(acc) + M(*reinterpret_cast<const T*>(m.p.p[2] + voff)));
    }
    dst[k] = acc;
  }
}

// The accumulation for any map: keys, stable radix sort, per-run serial adds.
void accumulate(const Tensor& dst, const IterGeometry<3>& g, int64_t size, int64_t stride) {
  const Device dev = dst.device();
  DeviceGuard guard(dev);
  cudaStream_t stream = current_stream(dev.index);
  const int64_t n = g.numel;
  AccumMap m{OffsetCalc<3>(g), pointers_of(g), static_cast<int64_t>(dst.itemsize()), size, stride};

  Tensor keys = Tensor::empty({2, n}, DType::Int64, dev), pos = Tensor::empty({2, n}, DType::Int64, dev);
  uint64_t* k_in = reinterpret_cast<uint64_t*>(keys.data<int64_t>());
  uint64_t* k_out = k_in + n;
  int64_t* p_in = pos.data<int64_t>();
  int64_t* p_out = p_in + n;
  accum_keys_kernel<<<grid_for(n), kThreads, 0, stream>>>(n, m, k_in, p_in);
  TT_CUDA_KERNEL_CHECK();

  // Destinations lie inside dst's storage: sort only the bits that can be set.
  const uint64_t bound = dst.storage()->nbytes() / dst.itemsize() - uint64_t(dst.offset());
  int end_bit = 1;
  while (end_bit < 64 && (bound >> end_bit) != 0) ++end_bit;
  size_t temp_bytes = 0;
  TT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k_in, k_out, p_in, p_out, n, 0, end_bit,
                                                stream));
  Tensor temp = Tensor::empty({int64_t(temp_bytes) + 1}, DType::UInt8, dev);
  TT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data_ptr(), temp_bytes, k_in, k_out, p_in, p_out, n, 0, end_bit,
                                                stream));
  TT_DISPATCH_ALL(dst.dtype(), "accumulate", [&] {
    accum_runs_kernel<scalar_t><<<grid_for(n), kThreads, 0, stream>>>(n, k_out, p_out, m);
  });
  TT_CUDA_KERNEL_CHECK();
}

void cuda_index_put(const Tensor& dst, const Tensor& offsets, const Tensor& values, bool accumulate_) {
  IterGeometry<3> g({&dst, &offsets, &values});
  if (g.numel == 0) return;
  if (accumulate_) return accumulate(dst, g, 0, 0);
  DeviceGuard guard(dst.device());
  cudaStream_t stream = current_stream(dst.device().index);
  dispatch_bytes(dst.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    index_put_kernel<U><<<grid_for(g.numel), kThreads, 0, stream>>>(g.numel, OffsetCalc<3>(g), pointers_of(g));
  });
  TT_CUDA_KERNEL_CHECK();
}

// ---------------------------------------------------------------- gather / scatter

// out, xr (x restrided to index's shape, stride 0 along dim), index: one shape
// -> out[i] = xr[i + wrap(index[i]) * stride]
template <class U>
__global__ void gather_kernel(int64_t n, OffsetCalc<3> oc, Pointers<3> p, int64_t size, int64_t stride) {
  TT_GRID_STRIDE(i, n) {
    int64_t off[3];
    oc.offsets(i, off);
    const int64_t v = bounds_checked(*reinterpret_cast<const int64_t*>(p.p[2] + off[2]), size);
    *reinterpret_cast<U*>(p.p[0] + off[0]) = reinterpret_cast<const U*>(p.p[1] + off[1])[v * stride];
  }
}

// x: (..., N, ...), index: (..., J, ...) -> out: (..., J, ...)
void cuda_gather(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& out) {
  Tensor xr = restride_to(x, index.shape(), dim);
  IterGeometry<3> g({&out, &xr, &index});
  if (g.numel == 0) return;
  const int64_t size = x.shape()[dim], stride = x.strides()[dim];
  DeviceGuard guard(out.device());
  cudaStream_t stream = current_stream(out.device().index);
  dispatch_bytes(out.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    gather_kernel<U><<<grid_for(g.numel), kThreads, 0, stream>>>(g.numel, OffsetCalc<3>(g), pointers_of(g), size,
                                                                 stride);
  });
  TT_CUDA_KERNEL_CHECK();
}

// sr (self restrided, stride 0 along dim), index, vr (src restrided): one shape
// -> sr[i + wrap(index[i]) * stride] = vr[i]; duplicates: any write wins (as PyTorch on GPU)
template <class U>
__global__ void scatter_kernel(int64_t n, OffsetCalc<3> oc, Pointers<3> p, int64_t size, int64_t stride) {
  TT_GRID_STRIDE(i, n) {
    int64_t off[3];
    oc.offsets(i, off);
    const int64_t v = bounds_checked(*reinterpret_cast<const int64_t*>(p.p[1] + off[1]), size);
    reinterpret_cast<U*>(p.p[0] + off[0])[v * stride] = *reinterpret_cast<const U*>(p.p[2] + off[2]);
  }
}

// self: (..., N, ...), index: (..., J, ...), src: >= index's shape -> self[.., index, ..] (+)= src
void cuda_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, bool add) {
  Tensor sr = restride_to(self, index.shape(), dim);
  Tensor vr = restride_to(src, index.shape(), -1);
  IterGeometry<3> g({&sr, &index, &vr});
  if (g.numel == 0) return;
  const int64_t size = self.shape()[dim], stride = self.strides()[dim];
  if (add) return accumulate(self, g, size, stride);
  DeviceGuard guard(self.device());
  cudaStream_t stream = current_stream(self.device().index);
  dispatch_bytes(self.itemsize(), [&](auto tag) {
    using U = decltype(tag);
    scatter_kernel<U><<<grid_for(g.numel), kThreads, 0, stream>>>(g.numel, OffsetCalc<3>(g), pointers_of(g), size,
                                                                  stride);
  });
  TT_CUDA_KERNEL_CHECK();
}

// ---------------------------------------------------------------- masked_fill

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <class T>
struct MaskedFillOp {
  T v;
  __device__ __forceinline__ T operator()(T x, bool m) const { return m ? v : x; }
};

// x: (...), mask: bool broadcastable to x -> x[mask] = value
void cuda_masked_fill(const Tensor& x, const Tensor& mask, double value) {
  TT_DISPATCH_ALL(x.dtype(), "masked_fill_", [&] {
    gpu_binary<scalar_t, scalar_t, bool>(x, mask, x, MaskedFillOp<scalar_t>{from_double<scalar_t>(value)});
  });
}

// ---------------------------------------------------------------- count_nonzero / nonzero

template <class T>
__device__ __forceinline__ bool nonzero_value(T v) {
  return opmath_t<T>(v) != opmath_t<T>(0);
}

// x: contiguous (n) -> *count += number of nonzeros (integer atomics: order-independent)
template <class T>
__global__ void count_nonzero_kernel(int64_t n, const T* x, unsigned long long* count) {
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  unsigned long long c = 0;
  TT_GRID_STRIDE(i, n) c += nonzero_value(x[i]);
  unsigned long long total = Reduce(tmp).Sum(c);
  if (threadIdx.x == 0 && total) atomicAdd(count, total);
}

void cuda_count_nonzero(const Tensor& x, int64_t& count) {
  const Device dev = x.device();
  DeviceGuard guard(dev);
  check_not_capturing(dev.index, "an op whose output size depends on the data (nonzero, boolean-mask indexing, "
                                 "masked_select, count_nonzero)");
  cudaStream_t stream = current_stream(dev.index);
  Tensor c = Tensor::empty({1}, DType::Int64, dev);
  TT_CUDA_CHECK(cudaMemsetAsync(c.data_ptr(), 0, sizeof(int64_t), stream));
  if (x.numel() > 0) {
    TT_DISPATCH_ALL(x.dtype(), "count_nonzero", [&] {
      count_nonzero_kernel<scalar_t><<<grid_for(x.numel(), 4), kThreads, 0, stream>>>(
          x.numel(), x.data<scalar_t>(), reinterpret_cast<unsigned long long*>(c.data<int64_t>()));
    });
    TT_CUDA_KERNEL_CHECK();
  }
  // The count sizes the output of nonzero/boolean indexing on the host, so this one
  // device-to-host copy and stream sync are unavoidable.
  int64_t host = 0;
  HostWait wait;   // may wait behind a collective (tinytorch/host_wait.h)
  TT_CUDA_CHECK(cudaMemcpyAsync(&host, c.data_ptr(), sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  TT_CUDA_CHECK(cudaStreamSynchronize(stream));
  count = host;
}

constexpr int kNzItems = 8;                       // rounds of kThreads elements per tile
constexpr int64_t kNzTile = int64_t(kThreads) * kNzItems;

// x: contiguous (n) -> counts[t] = nonzeros in tile t
template <class T>
__global__ void tile_count_kernel(int64_t n, const T* x, int64_t* counts) {
  using Reduce = cub::BlockReduce<int, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const int64_t start = int64_t(blockIdx.x) * kNzTile;
  int c = 0;
#pragma unroll
  for (int r = 0; r < kNzItems; ++r) {
    int64_t i = start + r * kThreads + threadIdx.x;
    c += i < n && nonzero_value(x[i]);
  }
  int total = Reduce(tmp).Sum(c);
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

struct Dims {
  int ndim;
  int64_t shape[kMaxDims];
};

// x: contiguous (n), base[t]: first output row of tile t -> out: (count, ndim) coordinates in
// row-major order (a block scan per round keeps the order inside the tile)
template <class T>
__global__ void nonzero_write_kernel(int64_t n, const T* x, const int64_t* base, Dims d, int64_t* out) {
  using Scan = cub::BlockScan<int, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  const int64_t start = int64_t(blockIdx.x) * kNzTile;
  int64_t row0 = base[blockIdx.x];
  for (int r = 0; r < kNzItems; ++r) {
    const int64_t i = start + r * kThreads + threadIdx.x;
    const int flag = i < n && nonzero_value(x[i]);
    int excl, total;
    Scan(tmp).ExclusiveSum(flag, excl, total);
    __syncthreads();  // tmp is reused next round
    if (flag) {
      int64_t* o = out + (row0 + excl) * d.ndim;
      int64_t rem = i;
      for (int k = d.ndim - 1; k >= 0; --k) {
        o[k] = rem % d.shape[k];
        rem /= d.shape[k];
      }
    }
    row0 += total;
  }
}

// x: contiguous, d dims -> out: (count, d) int64 (count from count_nonzero on the same x)
void cuda_nonzero(const Tensor& x, const Tensor& out) {
  const int64_t n = x.numel();
  if (n == 0 || out.numel() == 0) return;
  TT_CHECK(x.dim() <= kMaxDims, "nonzero: tensors with more than ", kMaxDims, " dims are not supported");
  const Device dev = x.device();
  DeviceGuard guard(dev);
  cudaStream_t stream = current_stream(dev.index);
  const int64_t tiles = (n + kNzTile - 1) / kNzTile;
  Tensor counts = Tensor::empty({2, tiles}, DType::Int64, dev);
  int64_t* cnt = counts.data<int64_t>();
  int64_t* base = cnt + tiles;
  Dims d;
  d.ndim = static_cast<int>(x.dim());
  for (int k = 0; k < d.ndim; ++k) d.shape[k] = x.shape()[k];
  TT_DISPATCH_ALL(x.dtype(), "nonzero", [&] {
    tile_count_kernel<scalar_t><<<unsigned(tiles), kThreads, 0, stream>>>(n, x.data<scalar_t>(), cnt);
    TT_CUDA_KERNEL_CHECK();
    size_t temp_bytes = 0;
    TT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, cnt, base, tiles, stream));
    Tensor temp = Tensor::empty({int64_t(temp_bytes) + 1}, DType::UInt8, dev);
    TT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data_ptr(), temp_bytes, cnt, base, tiles, stream));
    nonzero_write_kernel<scalar_t><<<unsigned(tiles), kThreads, 0, stream>>>(n, x.data<scalar_t>(), base, d,
                                                                            out.data<int64_t>());
    TT_CUDA_KERNEL_CHECK();
  });
}

}  // namespace

TT_REGISTER_KERNELS(CUDA, cuda, index_offsets, index, index_put, gather, scatter, masked_fill, count_nonzero, nonzero)

}  // namespace tt::cuda
