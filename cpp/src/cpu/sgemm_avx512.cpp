// AVX-512 float32 GEMM. B is cut into packed panels of 32 columns (read in place for products of
// a few rows); the micro-kernels keep a 12 x 32 tile of C in 24 zmm accumulators (2 loads + 12
// broadcasts per 24 FMAs: FMA-bound), broadcasting A from its 12 rows in place (a plain A) or from
// 12-row k-major packed blocks (a transposed A, whose rows are columns of memory). Small products
// (attention tiles) read A in place, 8 rows at a time, with nothing packed.
#include "sgemm_avx512.h"
#include <immintrin.h>
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include "simd_level.h"

namespace tt::cpu {

bool sgemm_avx512_enabled() {
  static const bool ok = simd_level() == SimdLevel::Avx512 && std::getenv("TINYTORCH_NO_AVX512_GEMM") == nullptr;
  return ok;
}

#if TT_X86_SIMD
namespace {

constexpr int kNR = 32;                // C columns per micro-tile: 2 zmm
constexpr int kMP = 12;                // C rows per packed micro-tile
constexpr int kMI = 8;                 // C rows per in-place micro-tile
constexpr int64_t kKC = 384;           // k-block: a B panel (384 x 32 floats, 48 KiB) ~ L1
// B read in place (no packing) only for products this short: its rows ldb apart fall into few L1
// sets (ldb = 128, 512, ... floats), so a panel read in place thrashes L1 once reused over many rows.
constexpr int64_t kDirectMaxM = 24;

TT_TARGET_AVX512 inline __mmask16 lo_mask(int64_t w) {
  return static_cast<__mmask16>(w >= 16 ? 0xFFFF : (1u << w) - 1);
}
TT_TARGET_AVX512 inline __mmask16 hi_mask(int64_t w) {
  return static_cast<__mmask16>(w >= 32 ? 0xFFFF : w > 16 ? (1u << (w - 16)) - 1 : 0);
}

// dst[p*ld + r] = rows[r][p] for r < 4, p < kc (0 for r >= live): 4 x 4 tiles transposed in
// registers. rows[r] for r >= live may be anything readable (it is masked out).
TT_TARGET_AVX512 void transpose4_into(const float* const* rows, int live, int64_t kc, float* dst, int64_t ld) {
  const __m128 keep = _mm_castsi128_ps(_mm_cmplt_epi32(_mm_setr_epi32(0, 1, 2, 3), _mm_set1_epi32(live)));
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) {
    __m128 x0 = _mm_loadu_ps(rows[0] + p), x1 = _mm_loadu_ps(rows[1] + p), x2 = _mm_loadu_ps(rows[2] + p),
           x3 = _mm_loadu_ps(rows[3] + p);
    _MM_TRANSPOSE4_PS(x0, x1, x2, x3);  // x_j = (rows[0..3][p + j])
    _mm_storeu_ps(dst + (p + 0) * ld, _mm_and_ps(x0, keep));
    _mm_storeu_ps(dst + (p + 1) * ld, _mm_and_ps(x1, keep));
    _mm_storeu_ps(dst + (p + 2) * ld, _mm_and_ps(x2, keep));
    _mm_storeu_ps(dst + (p + 3) * ld, _mm_and_ps(x3, keep));
  }
  for (; p < kc; ++p)
    for (int r = 0; r < 4; ++r) dst[p * ld + r] = r < live ? rows[r][p] : 0.f;
}

// Packs B[k0:k0+kc, 0:n] into ceil(n/32) panels, panel q: (kc, 32), zero-padded columns.
TT_TARGET_AVX512 void pack_b(const float* b, int64_t ldb, bool tb, int64_t k0, int64_t kc, int64_t n, float* dst) {
  for (int64_t q = 0; q < n; q += kNR, dst += kc * kNR) {
    const int64_t w = std::min<int64_t>(kNR, n - q);
    if (!tb) {  // row p of the panel: 32 consecutive floats of B's row k0 + p
      const __mmask16 m0 = lo_mask(w), m1 = hi_mask(w);
      for (int64_t p = 0; p < kc; ++p) {
        const float* src = b + (k0 + p) * ldb + q;
        _mm512_storeu_ps(dst + p * kNR, _mm512_maskz_loadu_ps(m0, src));
        _mm512_storeu_ps(dst + p * kNR + 16, _mm512_maskz_loadu_ps(m1, src + 16));
      }
    } else {  // B[k, j] = b[j*ldb + k]: column j of the panel is a contiguous run of b
      for (int64_t j0 = 0; j0 < kNR; j0 += 4) {
        const int live = static_cast<int>(std::clamp<int64_t>(w - j0, 0, 4));
        if (live == 0) {  // columns past n
          for (int64_t p = 0; p < kc; ++p) _mm_storeu_ps(dst + p * kNR + j0, _mm_setzero_ps());
          continue;
        }
        const float* rows[4];
        for (int r = 0; r < 4; ++r) rows[r] = b + (q + j0 + (r < live ? r : 0)) * ldb + k0;
        transpose4_into(rows, live, kc, dst + j0, kNR);
      }
    }
  }
}

// Packs A[0:m, k0:k0+kc] of a transposed A (A[i, p] = a[i + p*lda]) into ceil(m/12) blocks,
// block t: (kc, 12) k-major, rows past m zero. Row p of a is read once, front to back. (A plain
// A is read in place by micro_rows12: packing it is a transpose, ~20% of the product's time.)
TT_TARGET_AVX512 void pack_a_t(const float* a, int64_t lda, int64_t m, int64_t k0, int64_t kc, float* dst) {
  const int64_t nblk = (m + kMP - 1) / kMP;
  for (int64_t p = 0; p < kc; ++p) {
    const float* src = a + (k0 + p) * lda;
    for (int64_t t = 0; t < nblk; ++t) {
      const int64_t mr = std::min<int64_t>(kMP, m - t * kMP);
      const __mmask16 mm = static_cast<__mmask16>((1u << mr) - 1);
      _mm512_mask_storeu_ps(dst + (t * kc + p) * kMP, 0x0FFF, _mm512_maskz_loadu_ps(mm, src + t * kMP));
    }
  }
}

// A micro-kernel's panel width: kFull (w == 32, no masks), kHalf (w <= 16: one zmm per row,
// half the FMAs), kMasked.
enum PanelWidth { kFull, kHalf, kMasked };

// Row p of a panel (bp[0 : w]) as b0 = columns 0-15, b1 = 16-31 (b1 = b0 for kHalf, unused).
template <PanelWidth Width>
TT_TARGET_AVX512 __attribute__((always_inline)) inline void load_panel_row(const float* bp, __mmask16 m0, __mmask16 m1,
                                                                          __m512& b0, __m512& b1) {
  b0 = Width == kFull ? _mm512_loadu_ps(bp) : _mm512_maskz_loadu_ps(m0, bp);
  b1 = Width == kFull   ? _mm512_loadu_ps(bp + 16)
       : Width == kHalf ? b0
                        : _mm512_maskz_loadu_ps(m1, bp + 16);
}

// C[0:mr, 0:w] (=|+=) alpha * acc, acc[2r], acc[2r + 1] holding row r's columns 0-15, 16-31;
// first: apply beta (0 -> C not read), else add to C. (acc by array reference: as a pointer,
// GCC compiles the kernels' epilogues worse.)
template <PanelWidth Width, size_t N>
TT_TARGET_AVX512 __attribute__((always_inline)) inline void store_tile(const __m512 (&acc)[N], int64_t mr, float* c,
                                                                      int64_t ldc, __mmask16 m0, __mmask16 m1,
                                                                      float alpha, float beta, bool first) {
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(first ? beta : 1.f);
  const bool read = !first || beta != 0.f;
  for (int64_t r = 0; r < mr; ++r) {
    float* cr = c + r * ldc;
    __m512 v0 = _mm512_mul_ps(va, acc[2 * r]), v1 = _mm512_mul_ps(va, acc[2 * r + 1]);
    if (read) {
      v0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, cr), v0);
      if (Width != kHalf) v1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, cr + 16), v1);
    }
    _mm512_mask_storeu_ps(cr, m0, v0);
    if (Width != kHalf) _mm512_mask_storeu_ps(cr + 16, m1, v1);
  }
}

// Row r of the tile at step p: c_r0 += a * b0 and, unless kHalf, c_r1 += a * b1 (a: A[r, p]).
#define TT_FMA_ROW(r, a)                                            \
  {                                                                 \
    const __m512 av = _mm512_set1_ps(a);                            \
    c##r##0 = _mm512_fmadd_ps(av, b0, c##r##0);                     \
    if (Width != kHalf) c##r##1 = _mm512_fmadd_ps(av, b1, c##r##1); \
  }

// C[0:mr, 0:w] (=|+=) alpha * Apack (kc, 12) @ panel; first: apply beta (0 -> C not read).
// The panel's row p is bp[p*ldp : p*ldp + w].
template <PanelWidth Width>
TT_TARGET_AVX512 void micro_packed(int64_t mr, int64_t kc, const float* ap, const float* bp, int64_t ldp, float* c,
                                   int64_t ldc, int64_t w, float alpha, float beta, bool first) {
  const __mmask16 m0 = Width == kFull ? 0xFFFF : lo_mask(w), m1 = Width == kFull ? 0xFFFF : hi_mask(w);
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
         c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00, c80 = c00,
         c81 = c00, c90 = c00, c91 = c00, ca0 = c00, ca1 = c00, cb0 = c00, cb1 = c00;
#pragma GCC unroll 4  // ~5% over the plain loop
  for (int64_t p = 0; p < kc; ++p, ap += kMP, bp += ldp) {
    __m512 b0, b1;
    load_panel_row<Width>(bp, m0, m1, b0, b1);
    TT_FMA_ROW(0, ap[0]) TT_FMA_ROW(1, ap[1]) TT_FMA_ROW(2, ap[2]) TT_FMA_ROW(3, ap[3]) TT_FMA_ROW(4, ap[4])
    TT_FMA_ROW(5, ap[5]) TT_FMA_ROW(6, ap[6]) TT_FMA_ROW(7, ap[7]) TT_FMA_ROW(8, ap[8]) TT_FMA_ROW(9, ap[9])
    TT_FMA_ROW(a, ap[10]) TT_FMA_ROW(b, ap[11])
  }
  const __m512 acc[2 * kMP] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51,
                               c60, c61, c70, c71, c80, c81, c90, c91, ca0, ca1, cb0, cb1};
  store_tile<Width>(acc, mr, c, ldc, m0, m1, alpha, beta, first);
}

// As micro_packed<Width> with a plain A read in place (row r at a + r*lda, rows past mr re-read
// the last one and are dropped): no packing, 12 row pointers.
template <PanelWidth Width>
TT_TARGET_AVX512 void micro_rows12(int64_t mr, int64_t kc, const float* a, int64_t lda, const float* bp, int64_t ldp,
                                   float* c, int64_t ldc, int64_t w, float alpha, float beta, bool first) {
  const __mmask16 m0 = Width == kFull ? 0xFFFF : lo_mask(w), m1 = Width == kFull ? 0xFFFF : hi_mask(w);
  const float* ar[kMP];
  for (int r = 0; r < kMP; ++r) ar[r] = a + (r < mr ? r : mr - 1) * lda;
  const float *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3], *a4 = ar[4], *a5 = ar[5], *a6 = ar[6],
              *a7 = ar[7], *a8 = ar[8], *a9 = ar[9], *aa = ar[10], *ab = ar[11];
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
         c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00, c80 = c00,
         c81 = c00, c90 = c00, c91 = c00, ca0 = c00, ca1 = c00, cb0 = c00, cb1 = c00;
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p, bp += ldp) {
    __m512 b0, b1;
    load_panel_row<Width>(bp, m0, m1, b0, b1);
    TT_FMA_ROW(0, a0[p]) TT_FMA_ROW(1, a1[p]) TT_FMA_ROW(2, a2[p]) TT_FMA_ROW(3, a3[p]) TT_FMA_ROW(4, a4[p])
    TT_FMA_ROW(5, a5[p]) TT_FMA_ROW(6, a6[p]) TT_FMA_ROW(7, a7[p]) TT_FMA_ROW(8, a8[p]) TT_FMA_ROW(9, a9[p])
    TT_FMA_ROW(a, aa[p]) TT_FMA_ROW(b, ab[p])
  }
  const __m512 acc[2 * kMP] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51,
                               c60, c61, c70, c71, c80, c81, c90, c91, ca0, ca1, cb0, cb1};
  store_tile<Width>(acc, mr, c, ldc, m0, m1, alpha, beta, first);
}

// As micro_packed with A read in place (A[i, p] = a[i*rsa + p*csa]), 8 rows; rows past mr
// re-read row 0 and are dropped. 16 named accumulators (an array makes GCC spill them).
TT_TARGET_AVX512 void micro_inplace(int64_t mr, int64_t kc, const float* a, int64_t rsa, int64_t csa,
                                    const float* bp, int64_t ldp, float* c, int64_t ldc, int64_t w, float alpha,
                                    float beta, bool first) {
  constexpr PanelWidth Width = kMasked;  // for TT_FMA_ROW
  const __mmask16 m0 = lo_mask(w), m1 = hi_mask(w);
  const float* ar[kMI];
  for (int r = 0; r < kMI; ++r) ar[r] = a + (r < mr ? r : 0) * rsa;
  const float *a0 = ar[0], *a1 = ar[1], *a2 = ar[2], *a3 = ar[3], *a4 = ar[4], *a5 = ar[5], *a6 = ar[6], *a7 = ar[7];
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00,
         c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00;
  for (int64_t p = 0; p < kc; ++p) {
    __m512 b0, b1;
    load_panel_row<Width>(bp + p * ldp, m0, m1, b0, b1);
    const int64_t o = p * csa;
    TT_FMA_ROW(0, a0[o]) TT_FMA_ROW(1, a1[o]) TT_FMA_ROW(2, a2[o]) TT_FMA_ROW(3, a3[o]) TT_FMA_ROW(4, a4[o])
    TT_FMA_ROW(5, a5[o]) TT_FMA_ROW(6, a6[o]) TT_FMA_ROW(7, a7[o])
  }
  const __m512 acc[2 * kMI] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71};
  store_tile<Width>(acc, mr, c, ldc, m0, m1, alpha, beta, first);
}
#undef TT_FMA_ROW

// The micro-kernels' instantiation for a panel of w columns.
void micro_rows12_w(int64_t mr, int64_t kc, const float* a, int64_t lda, const float* bp, int64_t ldp, float* c,
                    int64_t ldc, int64_t w, float alpha, float beta, bool first) {
  if (w == kNR) micro_rows12<kFull>(mr, kc, a, lda, bp, ldp, c, ldc, w, alpha, beta, first);
  else if (w <= 16) micro_rows12<kHalf>(mr, kc, a, lda, bp, ldp, c, ldc, w, alpha, beta, first);
  else micro_rows12<kMasked>(mr, kc, a, lda, bp, ldp, c, ldc, w, alpha, beta, first);
}
void micro_packed_w(int64_t mr, int64_t kc, const float* ap, const float* bp, int64_t ldp, float* c, int64_t ldc,
                    int64_t w, float alpha, float beta, bool first) {
  if (w == kNR) micro_packed<kFull>(mr, kc, ap, bp, ldp, c, ldc, w, alpha, beta, first);
  else if (w <= 16) micro_packed<kHalf>(mr, kc, ap, bp, ldp, c, ldc, w, alpha, beta, first);
  else micro_packed<kMasked>(mr, kc, ap, bp, ldp, c, ldc, w, alpha, beta, first);
}

// Per-thread packing buffer that only grows (vector::resize would zero what it adds on every
// call larger than the previous one).
class Scratch {
 public:
  float* get(int64_t n) {
    if (n > cap_) buf_ = std::make_unique<float[]>(static_cast<size_t>(cap_ = n));
    return buf_.get();
  }

 private:
  std::unique_ptr<float[]> buf_;
  int64_t cap_ = 0;
};

// Fewer B panels than this: packing A costs more than it saves.
constexpr int64_t kPackAMinPanels = 3;
// A is taken in row blocks of about this many bytes (half of a 1-2 MiB L2).
constexpr int64_t kABlockBytes = 512 * 1024;

}  // namespace

void sgemm_avx512(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const int64_t rsa = ta ? 1 : lda, csa = ta ? lda : 1;
  // k is cut into equal blocks of <= kKC, a function of k only (the sum order never depends on m, n)
  const int64_t nkb = (k + kKC - 1) / kKC, kc_max = (k + nkb - 1) / nkb;
  const int64_t npan = (n + kNR - 1) / kNR, nablk = (m + kMP - 1) / kMP;
  const bool direct = !tb && m <= kDirectMaxM;
  const bool rows12 = !ta;                                // plain A: read in place, 12 rows
  const bool packed_a = ta && npan >= kPackAMinPanels;  // transposed A: packed, 12 rows
  thread_local Scratch bscratch, ascratch;
  float* bpack = direct ? nullptr : bscratch.get(kc_max * npan * kNR);
  float* apack = packed_a ? ascratch.get(kc_max * nablk * kMP) : nullptr;
  for (int64_t k0 = 0; k0 < k; k0 += kc_max) {
    const int64_t kc = std::min(kc_max, k - k0);
    const bool first = k0 == 0;
    if (!direct) pack_b(b, ldb, tb, k0, kc, n, bpack);
    if (packed_a) pack_a_t(a, lda, m, k0, kc, apack);
    // A in blocks of mc rows whose (mc x kc) part stays in L2 while every B panel passes
    const int64_t mc = packed_a || rows12 ? std::max<int64_t>(kMP, kABlockBytes / (kc * 4) / kMP * kMP) : m;
    for (int64_t i0 = 0; i0 < m; i0 += mc) {
      const int64_t mb = std::min(mc, m - i0);
      for (int64_t q = 0; q < npan; ++q) {  // a B panel stays in L1 while the rows of A stream by
        const float* bp = direct ? b + k0 * ldb + q * kNR : bpack + q * kc * kNR;
        const int64_t ldp = direct ? ldb : kNR, w = std::min<int64_t>(kNR, n - q * kNR);
        float* cq = c + q * kNR;
        if (rows12) {
          for (int64_t i = i0; i < i0 + mb; i += kMP) {
            const int64_t mr = std::min<int64_t>(kMP, m - i);
            micro_rows12_w(mr, kc, a + i * lda + k0, lda, bp, ldp, cq + i * ldc, ldc, w, alpha, beta, first);
          }
        } else if (packed_a) {
          for (int64_t i = i0; i < i0 + mb; i += kMP) {
            const int64_t mr = std::min<int64_t>(kMP, m - i);
            micro_packed_w(mr, kc, apack + (i / kMP) * kc * kMP, bp, ldp, cq + i * ldc, ldc, w, alpha, beta, first);
          }
        } else {
          for (int64_t i = i0; i < i0 + mb; i += kMI)
            micro_inplace(std::min<int64_t>(kMI, m - i), kc, a + i * rsa + k0 * csa, rsa, csa, bp, ldp,
                          cq + i * ldc, ldc, w, alpha, beta, first);
        }
      }
    }
  }
}

void sgemm_avx512_small(int64_t m, int64_t n, int64_t k, const float* a, int64_t rsa, int64_t csa, const float* b,
                        int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  if (k == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, 0.f);
    return;
  }
  const float beta = accumulate ? 1.f : 0.f;
  for (int64_t q = 0; q < n; q += kNR) {
    const int64_t w = std::min<int64_t>(kNR, n - q);
    if (csa == 1) {  // rows of A contiguous: 12 at a time
      for (int64_t i = 0; i < m; i += kMP) {
        micro_rows12_w(std::min<int64_t>(kMP, m - i), k, a + i * rsa, rsa, b + q, ldb, c + i * ldc + q, ldc, w, 1.f,
                       beta, true);
      }
    } else {
      for (int64_t i = 0; i < m; i += kMI)
        micro_inplace(std::min<int64_t>(kMI, m - i), k, a + i * rsa, rsa, csa, b + q, ldb, c + i * ldc + q, ldc, w,
                      1.f, beta, true);
    }
  }
}

#else  // not x86-64 GCC: never enabled

void sgemm_avx512(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float,
                  float*, int64_t) {
  throw std::logic_error("sgemm_avx512: not built for this target");
}
void sgemm_avx512_small(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const float*, int64_t, float*,
                        int64_t, bool) {
  throw std::logic_error("sgemm_avx512_small: not built for this target");
}

#endif

}  // namespace tt::cpu
