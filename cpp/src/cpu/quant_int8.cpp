// CPU matvec on packed Q4_0 / Q4_1 / Q8_0 rows with int8 activations (see quant_int8.h): per
// 32-value block one maddubs of the weight codes (unsigned nibbles; Q8_0's signed codes with the
// sign moved onto x) by x's int8 codes, then the block's scale d_w * d_x.
#include "quant_int8.h"
#include <immintrin.h>
#include <algorithm>
#include <atomic>
#include <cmath>
#include "tinytorch/kernels/quant.h"
#include "tinytorch/quant_math.h"

namespace tt::cpu {
namespace {

using quant::QType;

#define TT_INT8_AVX2 __attribute__((target("avx2,fma,f16c")))

TT_INT8_AVX2 inline float fp16_at(const uint8_t* b) {
  return _cvtsh_ss(static_cast<unsigned short>(b[0] | (b[1] << 8)));
}

TT_INT8_AVX2 inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The 32 codes of a block as bytes, values 0..31 in order, and whether they are signed (Q8_0).
template <QType Q>
TT_INT8_AVX2 __attribute__((always_inline)) inline __m256i block_codes(const uint8_t* blk) {
  if constexpr (Q == QType::Q8_0) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2));
  } else {
    // nibbles: byte i holds value i (low) and value i + 16 (high)
    __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + (Q == QType::Q4_1 ? 4 : 2)));
    __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
  }
}

// sum_i w_code_i * x_code_i over a block, as 8 int32 lanes turned float.
template <QType Q>
TT_INT8_AVX2 __attribute__((always_inline)) inline __m256 block_dot(__m256i w, const int8_t* xq) {
  __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq));
  __m256i p16;
  if constexpr (Q == QType::Q8_0)  // maddubs takes one unsigned operand: |w| times x with w's sign
    p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
  else
    p16 = _mm256_maddubs_epi16(w, x);  // nibbles 0..15 times int8: no 16-bit saturation
  return _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, _mm256_set1_epi16(1)));
}

// out[r, n] for R input rows from m0 and rows [n0, n1) of w: x codes xq (M, K), scales xd,
// float block sums xs, code sums qs (M, K/32).
template <QType Q, int R>
TT_INT8_AVX2 void rows_int8(const int8_t* xq, const float* xd, const float* xs, const int32_t* qs, int64_t K,
                            int64_t m0, const uint8_t* w, int64_t row, float* out, int64_t ldo, int64_t n0,
                            int64_t n1) {
  constexpr int64_t kBytes = quant::Format<Q>::kBytes;
  const int64_t nb = K / 32;
  for (int64_t n = n0; n < n1; ++n) {
    const uint8_t* wr = w + n * row;
    __m256 acc[R];
    float offset[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps(), offset[r] = 0.f;
    for (int64_t b = 0; b < nb; ++b) {
      const uint8_t* blk = wr + b * kBytes;
      const __m256i codes = block_codes<Q>(blk);
      const float dw = fp16_at(blk);
      for (int r = 0; r < R; ++r) {
        const int64_t i = (m0 + r) * nb + b;
        const float scale = dw * xd[i];
        acc[r] = _mm256_fmadd_ps(block_dot<Q>(codes, xq + i * 32), _mm256_set1_ps(scale), acc[r]);
        if constexpr (Q == QType::Q4_1) offset[r] += fp16_at(blk + 2) * xs[i];   // + m * sum(x)
        if constexpr (Q == QType::Q4_0) offset[r] -= 8.f * scale * float(qs[i]);  // codes are q - 8
      }
    }
    for (int r = 0; r < R; ++r) out[(m0 + r) * ldo + n] = hsum(acc[r]) + offset[r];
  }
}

constexpr int kRows = 4;

template <QType Q>
void rows_any(int r, const int8_t* xq, const float* xd, const float* xs, const int32_t* qs, int64_t K, int64_t m0,
              const uint8_t* w, int64_t row, float* out, int64_t ldo, int64_t n0, int64_t n1) {
  switch (r) {
    case 1: return rows_int8<Q, 1>(xq, xd, xs, qs, K, m0, w, row, out, ldo, n0, n1);
    case 2: return rows_int8<Q, 2>(xq, xd, xs, qs, K, m0, w, row, out, ldo, n0, n1);
    case 3: return rows_int8<Q, 3>(xq, xd, xs, qs, K, m0, w, row, out, ldo, n0, n1);
    default: return rows_int8<Q, kRows>(xq, xd, xs, qs, K, m0, w, row, out, ldo, n0, n1);
  }
}

}  // namespace

bool quant_matvec_int8_formats(int64_t qtype) {
  return qtype == static_cast<int64_t>(QType::Q4_0) || qtype == static_cast<int64_t>(QType::Q4_1) ||
         qtype == static_cast<int64_t>(QType::Q8_0);
}

// llama.cpp's Q8 rounding of x: d = max|x| / 127, codes round-to-nearest(x / d) in [-127, 127].
QuantizedX::QuantizedX(const float* x, int64_t M, int64_t K)
    : M_(M), K_(K), q_(static_cast<size_t>(M * K)), d_(static_cast<size_t>(M * (K / 32))),
      sum_(d_.size()), qsum_(d_.size()) {
  for (int64_t i = 0; i < M * (K / 32); ++i) {
    const float* xb = x + i * 32;
    float amax = 0.f, s = 0.f;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(xb[j])), s += xb[j];
    const float d = amax / 127.f, id = amax > 0.f ? 127.f / amax : 0.f;
    int32_t qs = 0;
    for (int j = 0; j < 32; ++j) {
      const int8_t c = static_cast<int8_t>(std::nearbyint(xb[j] * id));
      q_[i * 32 + j] = c;
      qs += c;
    }
    d_[i] = d, sum_[i] = s, qsum_[i] = qs;
  }
}

void QuantizedX::rows(int64_t qtype, const uint8_t* w, int64_t row, float* out, int64_t ldo, int64_t n0,
                      int64_t n1) const {
  for (int64_t m0 = 0; m0 < M_; m0 += kRows) {
    const int r = static_cast<int>(std::min<int64_t>(kRows, M_ - m0));
    const int8_t* xq = q_.data();
    switch (static_cast<QType>(qtype)) {
      case QType::Q4_0:
        rows_any<QType::Q4_0>(r, xq, d_.data(), sum_.data(), qsum_.data(), K_, m0, w, row, out, ldo, n0, n1);
        break;
      case QType::Q4_1:
        rows_any<QType::Q4_1>(r, xq, d_.data(), sum_.data(), qsum_.data(), K_, m0, w, row, out, ldo, n0, n1);
        break;
      default:
        rows_any<QType::Q8_0>(r, xq, d_.data(), sum_.data(), qsum_.data(), K_, m0, w, row, out, ldo, n0, n1);
    }
  }
}

}  // namespace tt::cpu

namespace tt {
namespace {
std::atomic<bool> int8_activations{false};
}
void set_quant_int8_activations(bool on) { int8_activations = on; }
bool quant_int8_activations() { return int8_activations; }
}  // namespace tt
