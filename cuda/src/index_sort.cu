// CUDA sort/topk along the last dim of a contiguous (R, n) tensor, matching cpp/src/cpu/index_sort.cpp:
// NaN is larger than every number, ties keep input order (stable, also when descending).
//
// Each element becomes an unsigned radix key whose unsigned order is the wanted order: floats
// map sign-magnitude to two's-complement order (with -0 folded onto +0 so they tie, and every NaN
// onto the largest key); descending sorts use ~key, so a stable ascending sort of ~key is a
// stable descending sort. CUB sorts (key, column) pairs: DeviceSegmentedSort::StableSortPairs
// for many rows (it picks warp/block/radix strategies by segment size), DeviceRadixSort per row
// for very long rows. Values are then gathered from x by the sorted column, so they are exactly
// the input's elements (sign of zero and NaN payloads kept). topk sorts and keeps k columns.
#include <cub/cub.cuh>
#include "tinytorch/cuda/loops.cuh"
#include "tinytorch/kernels/index.h"

namespace tt::cuda {
namespace {

// The unsigned key type per element type: the unsigned integer of its size.
template <size_t N> struct UnsignedOfSize;
template <> struct UnsignedOfSize<1> { using type = uint8_t; };
template <> struct UnsignedOfSize<2> { using type = uint16_t; };
template <> struct UnsignedOfSize<4> { using type = uint32_t; };
template <> struct UnsignedOfSize<8> { using type = uint64_t; };
template <class T> struct KeyOf { using type = typename UnsignedOfSize<sizeof(T)>::type; };

// IEEE bits -> order-preserving unsigned: negatives reversed below positives.
template <class K>
__device__ __forceinline__ K float_bits_key(K bits) {
  constexpr K sign = K(K(1) << (sizeof(K) * 8 - 1));
  return (bits & sign) ? K(~bits) : K(bits | sign);
}

template <class T>
__device__ __forceinline__ typename KeyOf<T>::type radix_key(T v) {
  using K = typename KeyOf<T>::type;
  if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, uint8_t>) {
    return K(v);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    return K(K(v) ^ (K(1) << (sizeof(K) * 8 - 1)));
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    const float f = float(v);
    if (f != f) return K(~K(0));
    if (f == 0.0f) return float_bits_key<K>(0);
    return float_bits_key<K>(v.bits);
  } else {
    if (v != v) return K(~K(0));
    if (v == T(0)) return float_bits_key<K>(0);
    K bits;
    memcpy(&bits, &v, sizeof(K));
    return float_bits_key<K>(bits);
  }
}

// x: (R, n) contiguous -> keys (R, n), cols (R, n) = column index
template <class T, class K>
__global__ void make_keys_kernel(int64_t total, int64_t n, const T* x, bool descending, K* keys, int64_t* cols) {
  TT_GRID_STRIDE(i, total) {
    K k = radix_key(x[i]);
    keys[i] = descending ? K(~k) : k;
    cols[i] = i % n;
  }
}

// values[r, j] = x[r, cols[r, j]] for j < k: (R, k) outputs from (R, n) sorted columns
template <class T>
__global__ void take_kernel(int64_t total, int64_t n, int64_t k, const T* x, const int64_t* cols, T* values,
                            int64_t* indices) {
  TT_GRID_STRIDE(i, total) {
    const int64_t r = i / k, j = i % k;
    const int64_t c = cols[r * n + j];
    values[i] = x[r * n + c];
    if (indices) indices[i] = c;
  }
}

// row offsets r * n for r in [0, rows]
__global__ void row_offsets_kernel(int64_t rows, int64_t n, int64_t* off) {
  TT_GRID_STRIDE(r, rows + 1) { off[r] = r * n; }
}

// Rows longer than this get a device-wide radix sort each; shorter rows go to one segmented sort.
constexpr int64_t kLongRow = int64_t(1) << 17;

// x: (R, n) contiguous -> cols_out: (R, n) int64 column order of each row (stable)
template <class T>
void sort_columns(const Tensor& x, bool descending, int64_t rows, int64_t n, int64_t* cols_out) {
  using K = typename KeyOf<T>::type;
  const Device dev = x.device();
  cudaStream_t stream = current_stream(dev.index);
  const int64_t total = rows * n;
  // keys in/out share one buffer (K elements, stored in int64 words), columns in one more
  Tensor kbuf = Tensor::empty({(2 * total * int64_t(sizeof(K)) + 7) / 8}, DType::Int64, dev);
  Tensor cin = Tensor::empty({total}, DType::Int64, dev);
  K* k_in = reinterpret_cast<K*>(kbuf.data_ptr());
  K* k_out = k_in + total;
  make_keys_kernel<T, K><<<grid_for(total), kThreads, 0, stream>>>(total, n, x.data<T>(), descending, k_in,
                                                                   cin.data<int64_t>());
  TT_CUDA_KERNEL_CHECK();
  size_t temp_bytes = 0;
  if (n >= kLongRow || rows == 1) {
    TT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k_in, k_out, cin.data<int64_t>(), cols_out,
                                                  n, 0, int(sizeof(K) * 8), stream));
    Tensor temp = Tensor::empty({int64_t(temp_bytes) + 1}, DType::UInt8, dev);
    for (int64_t r = 0; r < rows; ++r) {
      size_t bytes = temp_bytes;
      TT_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data_ptr(), bytes, k_in + r * n, k_out + r * n,
                                                    cin.data<int64_t>() + r * n, cols_out + r * n, n, 0,
                                                    int(sizeof(K) * 8), stream));
    }
    return;
  }
  Tensor offs = Tensor::empty({rows + 1}, DType::Int64, dev);
  int64_t* off = offs.data<int64_t>();
  row_offsets_kernel<<<grid_for(rows + 1), kThreads, 0, stream>>>(rows, n, off);
  TT_CUDA_KERNEL_CHECK();
  TT_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(nullptr, temp_bytes, k_in, k_out, cin.data<int64_t>(),
                                                          cols_out, total, rows, off, off + 1, stream));
  Tensor temp = Tensor::empty({int64_t(temp_bytes) + 1}, DType::UInt8, dev);
  TT_CUDA_CHECK(cub::DeviceSegmentedSort::StableSortPairs(temp.data_ptr(), temp_bytes, k_in, k_out,
                                                          cin.data<int64_t>(), cols_out, total, rows, off, off + 1,
                                                          stream));
}

// x: (R, n) -> values: (R, n), indices: (R, n)
void cuda_sort(const Tensor& x, bool descending, const Tensor& values, const Tensor& indices) {
  const int64_t n = x.dim() ? x.shape().back() : 1, rows = n ? x.numel() / n : 0;
  if (rows == 0 || n == 0) return;
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  TT_DISPATCH_ALL(x.dtype(), "sort", [&] {
    using T = scalar_t;
    sort_columns<T>(x, descending, rows, n, indices.data<int64_t>());
    const int64_t total = rows * n;
    take_kernel<T><<<grid_for(total), kThreads, 0, stream>>>(total, n, n, x.data<T>(), indices.data<int64_t>(),
                                                             values.data<T>(), nullptr);
    TT_CUDA_KERNEL_CHECK();
  });
}

// x: (R, n) -> values: (R, k), indices: (R, k), sorted (largest first when largest)
void cuda_topk(const Tensor& x, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  const int64_t n = x.shape().back(), rows = n ? x.numel() / n : 0;
  if (k == 0 || rows == 0) return;
  DeviceGuard guard(x.device());
  cudaStream_t stream = current_stream(x.device().index);
  Tensor cols = Tensor::empty({rows, n}, DType::Int64, x.device());
  TT_DISPATCH_ALL(x.dtype(), "topk", [&] {
    using T = scalar_t;
    sort_columns<T>(x, largest, rows, n, cols.data<int64_t>());
    const int64_t total = rows * k;
    take_kernel<T><<<grid_for(total), kThreads, 0, stream>>>(total, n, k, x.data<T>(), cols.data<int64_t>(),
                                                             values.data<T>(), indices.data<int64_t>());
    TT_CUDA_KERNEL_CHECK();
  });
}

}  // namespace

TT_REGISTER_KERNEL(sort, CUDA, cuda_sort)
TT_REGISTER_KERNEL(topk, CUDA, cuda_topk)

}  // namespace tt::cuda
