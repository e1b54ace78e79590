// CPU Winograd F(2x2, 3x3) transforms (kernels/winograd.h): B^T d B of the input tiles, G g G^T of the
// weights, A^T m A of the products. The tile loops run over tx with unit-stride stores, so GCC
// vectorizes them; each is compiled for AVX-512, AVX2 and the baseline and picked by simd_level().
#include <algorithm>
#include <cstring>
#include <vector>
#include "simd_level.h"
#include "tinytorch/kernels/winograd.h"
#include "tinytorch/parallel.h"

namespace tt::cpu {
namespace {

// Plane x: (H, W) -> v rows v[e * ve + tx] for the tiles of one plane (tile row ty at + ty * tw),
// through a zero-padded copy pad: (2*th + 2, 2*tw + 2).
__attribute__((always_inline)) inline void input_plane(const float* x, int64_t H, int64_t W, int64_t ph, int64_t pw,
                                                       int64_t th, int64_t tw, float* pad, float* v, int64_t ve) {
  const int64_t Hp = 2 * th + 2, Wp = 2 * tw + 2;
  std::fill(pad, pad + Hp * Wp, 0.f);
  for (int64_t r = 0; r < Hp; ++r) {
    int64_t ih = r - ph;
    if (ih < 0 || ih >= H) continue;
    int64_t lo = std::max<int64_t>(0, pw), hi = std::min<int64_t>(Wp, W + pw);  // pad columns holding x
    if (hi > lo) std::memcpy(pad + r * Wp + lo, x + ih * W + (lo - pw), static_cast<size_t>(hi - lo) * sizeof(float));
  }
  for (int64_t ty = 0; ty < th; ++ty) {
    const float* __restrict r0 = pad + 2 * ty * Wp;
    const float* __restrict r1 = r0 + Wp;
    const float* __restrict r2 = r1 + Wp;
    const float* __restrict r3 = r2 + Wp;
    // 16 output rows as distinct restrict pointers, so the tx loop vectorizes with plain stores
    float* base = v + ty * tw;
    float *__restrict o0 = base, *__restrict o1 = o0 + ve, *__restrict o2 = o1 + ve, *__restrict o3 = o2 + ve,
                      *__restrict o4 = o3 + ve, *__restrict o5 = o4 + ve, *__restrict o6 = o5 + ve,
                      *__restrict o7 = o6 + ve, *__restrict o8 = o7 + ve, *__restrict o9 = o8 + ve,
                      *__restrict o10 = o9 + ve, *__restrict o11 = o10 + ve, *__restrict o12 = o11 + ve,
                      *__restrict o13 = o12 + ve, *__restrict o14 = o13 + ve, *__restrict o15 = o14 + ve;
    for (int64_t tx = 0; tx < tw; ++tx) {
      const int64_t s = 2 * tx;
      // d B per row (B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1])
      float a0 = r0[s] - r0[s + 2], a1 = r0[s + 1] + r0[s + 2], a2 = r0[s + 2] - r0[s + 1], a3 = r0[s + 1] - r0[s + 3];
      float b0 = r1[s] - r1[s + 2], b1 = r1[s + 1] + r1[s + 2], b2 = r1[s + 2] - r1[s + 1], b3 = r1[s + 1] - r1[s + 3];
      float c0 = r2[s] - r2[s + 2], c1 = r2[s + 1] + r2[s + 2], c2 = r2[s + 2] - r2[s + 1], c3 = r2[s + 1] - r2[s + 3];
      float d0 = r3[s] - r3[s + 2], d1 = r3[s + 1] + r3[s + 2], d2 = r3[s + 2] - r3[s + 1], d3 = r3[s + 1] - r3[s + 3];
      // then B^T on the left: rows a - c, b + c, c - b, b - d
      o0[tx] = a0 - c0, o1[tx] = a1 - c1, o2[tx] = a2 - c2, o3[tx] = a3 - c3;
      o4[tx] = b0 + c0, o5[tx] = b1 + c1, o6[tx] = b2 + c2, o7[tx] = b3 + c3;
      o8[tx] = c0 - b0, o9[tx] = c1 - b1, o10[tx] = c2 - b2, o11[tx] = c3 - b3;
      o12[tx] = b0 - d0, o13[tx] = b1 - d1, o14[tx] = b2 - d2, o15[tx] = b3 - d3;
    }
  }
}

// m rows m[e * me + tile] of one output plane -> out: (Ho, Wo); edge tiles (odd Ho or Wo) through
// two rows of 2*tw.
__attribute__((always_inline)) inline void output_plane(const float* m, int64_t me, int64_t th, int64_t tw,
                                                        int64_t Ho, int64_t Wo, float* rows, float* out) {
  for (int64_t ty = 0; ty < th; ++ty) {
    const float* base = m + ty * tw;
    const float *__restrict s0 = base, *__restrict s1 = s0 + me, *__restrict s2 = s1 + me, *__restrict s3 = s2 + me,
                *__restrict s4 = s3 + me, *__restrict s5 = s4 + me, *__restrict s6 = s5 + me,
                *__restrict s7 = s6 + me, *__restrict s8 = s7 + me, *__restrict s9 = s8 + me,
                *__restrict s10 = s9 + me, *__restrict s11 = s10 + me, *__restrict s12 = s11 + me,
                *__restrict s13 = s12 + me, *__restrict s14 = s13 + me, *__restrict s15 = s14 + me;
    const bool whole = Wo == 2 * tw && 2 * ty + 1 < Ho;  // both rows, every column: write out in place
    float* __restrict y0 = whole ? out + 2 * ty * Wo : rows;
    float* __restrict y1 = whole ? y0 + Wo : rows + 2 * tw;
    for (int64_t tx = 0; tx < tw; ++tx) {
      // A^T m (A^T = [1 1 1 0; 0 1 -1 -1]) per column j, then A on the right
      float p0 = s0[tx] + s4[tx] + s8[tx], q0 = s4[tx] - s8[tx] - s12[tx];
      float p1 = s1[tx] + s5[tx] + s9[tx], q1 = s5[tx] - s9[tx] - s13[tx];
      float p2 = s2[tx] + s6[tx] + s10[tx], q2 = s6[tx] - s10[tx] - s14[tx];
      float p3 = s3[tx] + s7[tx] + s11[tx], q3 = s7[tx] - s11[tx] - s15[tx];
      y0[2 * tx] = p0 + p1 + p2, y0[2 * tx + 1] = p1 - p2 - p3;
      y1[2 * tx] = q0 + q1 + q2, y1[2 * tx + 1] = q1 - q2 - q3;
    }
    if (!whole) {
      std::memcpy(out + 2 * ty * Wo, y0, static_cast<size_t>(Wo) * sizeof(float));
      if (2 * ty + 1 < Ho) std::memcpy(out + (2 * ty + 1) * Wo, y1, static_cast<size_t>(Wo) * sizeof(float));
    }
  }
}

// go plane: (Ho, Wo) -> z rows z[e * ze + tile] = (A dY A^T)[e] of each 2x2 tile dY (0 past Ho, Wo),
// A = [1 0; 1 1; 1 -1; 0 -1], through a zero-padded copy pad: (2*th, 2*tw).
__attribute__((always_inline)) inline void grad_output_plane(const float* go, int64_t Ho, int64_t Wo, int64_t th,
                                                             int64_t tw, float* pad, float* z, int64_t ze) {
  const int64_t Wp = 2 * tw;
  if (Ho != 2 * th || Wo != Wp) std::fill(pad, pad + 2 * th * Wp, 0.f);
  for (int64_t r = 0; r < Ho; ++r) std::memcpy(pad + r * Wp, go + r * Wo, static_cast<size_t>(Wo) * sizeof(float));
  for (int64_t ty = 0; ty < th; ++ty) {
    const float* __restrict r0 = pad + 2 * ty * Wp;
    const float* __restrict r1 = r0 + Wp;
    float* base = z + ty * tw;
    float *__restrict o0 = base, *__restrict o1 = o0 + ze, *__restrict o2 = o1 + ze, *__restrict o3 = o2 + ze,
                      *__restrict o4 = o3 + ze, *__restrict o5 = o4 + ze, *__restrict o6 = o5 + ze,
                      *__restrict o7 = o6 + ze, *__restrict o8 = o7 + ze, *__restrict o9 = o8 + ze,
                      *__restrict o10 = o9 + ze, *__restrict o11 = o10 + ze, *__restrict o12 = o11 + ze,
                      *__restrict o13 = o12 + ze, *__restrict o14 = o13 + ze, *__restrict o15 = o14 + ze;
    for (int64_t tx = 0; tx < tw; ++tx) {
      const float y00 = r0[2 * tx], y01 = r0[2 * tx + 1], y10 = r1[2 * tx], y11 = r1[2 * tx + 1];
      // A dY: rows y0, y0 + y1, y0 - y1, -y1; then A^T on the right: columns u0, u0 + u1, u0 - u1, -u1
      const float a0 = y00, a1 = y01, b0 = y00 + y10, b1 = y01 + y11, c0 = y00 - y10, c1 = y01 - y11, d0 = -y10,
                  d1 = -y11;
      o0[tx] = a0, o1[tx] = a0 + a1, o2[tx] = a0 - a1, o3[tx] = -a1;
      o4[tx] = b0, o5[tx] = b0 + b1, o6[tx] = b0 - b1, o7[tx] = -b1;
      o8[tx] = c0, o9[tx] = c0 + c1, o10[tx] = c0 - c1, o11[tx] = -c1;
      o12[tx] = d0, o13[tx] = d0 + d1, o14[tx] = d0 - d1, o15[tx] = -d1;
    }
  }
}

TT_SIMD_COPIES(grad_output_plane,
               (const float* go, int64_t Ho, int64_t Wo, int64_t th, int64_t tw, float* pad, float* z, int64_t ze),
               (go, Ho, Wo, th, tw, pad, z, ze))
TT_SIMD_COPIES(input_plane,
               (const float* x, int64_t H, int64_t W, int64_t ph, int64_t pw, int64_t th, int64_t tw, float* pad,
                float* v, int64_t ve),
               (x, H, W, ph, pw, th, tw, pad, v, ve))
TT_SIMD_COPIES(output_plane,
               (const float* m, int64_t me, int64_t th, int64_t tw, int64_t Ho, int64_t Wo, float* rows, float* out),
               (m, me, th, tw, Ho, Wo, rows, out))

void check_f32(const char* op, const Tensor& t) {
  TT_CHECK(t.dtype() == DType::Float32 && t.is_contiguous(), op, ": expected a contiguous float32 tensor, got ",
           t.describe());
}
// v or m: (16, R, T) float32, dense (R, T) blocks, any stride between the 16.
void check_entries(const char* op, const Tensor& t, int64_t R, int64_t T) {
  TT_CHECK(t.dtype() == DType::Float32 && t.dim() == 3 && t.size(0) == 16 && t.size(1) == R && t.size(2) == T &&
               (T <= 1 || t.stride(2) == 1) && (R <= 1 || t.stride(1) == T),
           op, ": expected (16, ", R, ", ", T, ") float32 with dense rows, got ", t.describe());
}

// x: (nb, C, H, W) -> v: (16, C, nb*th*tw); one task per (b, c) plane.
void cpu_winograd_input(const Tensor& x, const Tensor& v, int64_t ph, int64_t pw, int64_t th, int64_t tw) {
  check_f32("winograd_input", x);
  int64_t nb = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), T = nb * th * tw;
  check_entries("winograd_input", v, C, T);
  const float* xp = x.data<float>();
  float* vp = v.data<float>();
  auto plane = simd_pick(input_plane_avx512, input_plane_avx2, input_plane_default);
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, 16 * th * tw));
  parallel_for(0, nb * C, grain, [&](int64_t i0, int64_t i1) {
    std::vector<float> pad(static_cast<size_t>((2 * th + 2) * (2 * tw + 2)));
    for (int64_t i = i0; i < i1; ++i) {
      int64_t b = i / C, c = i % C;
      plane(xp + i * H * W, H, W, ph, pw, th, tw, pad.data(), vp + c * T + b * th * tw, v.stride(0));
    }
  });
}

// w: (O, C, 3, 3) -> u: (16, O, C), or (16, C, O) of the rotated kernels when transposed.
void cpu_winograd_weight(const Tensor& w, const Tensor& u, bool transposed) {
  check_f32("winograd_weight", w), check_f32("winograd_weight", u);
  int64_t O = w.size(0), C = w.size(1);
  TT_CHECK(w.size(2) == 3 && w.size(3) == 3 && u.numel() == 16 * O * C, "winograd_weight: w ", w.describe(),
           " must be (O, C, 3, 3) and u ", u.describe(), " hold 16 x O x C");
  const float* wp = w.data<float>();
  float* up = u.data<float>();
  int64_t OC = O * C;
  parallel_for(0, OC, std::max<int64_t>(1, kGrainSize / 64), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {  // i: the index into u[e], (o, c) or transposed (c, o)
      int64_t o = transposed ? i % O : i / C, c = transposed ? i / O : i % C;
      const float* src = wp + (o * C + c) * 9;
      float g[3][3];
      for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) g[r][s] = transposed ? src[(2 - r) * 3 + (2 - s)] : src[r * 3 + s];
      float t[4][3];  // G g, G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]
      for (int s = 0; s < 3; ++s) {
        t[0][s] = g[0][s], t[1][s] = 0.5f * (g[0][s] + g[1][s] + g[2][s]);
        t[2][s] = 0.5f * (g[0][s] - g[1][s] + g[2][s]), t[3][s] = g[2][s];
      }
      int64_t dst = i;
      for (int a = 0; a < 4; ++a) {  // (G g) G^T
        up[(a * 4 + 0) * OC + dst] = t[a][0];
        up[(a * 4 + 1) * OC + dst] = 0.5f * (t[a][0] + t[a][1] + t[a][2]);
        up[(a * 4 + 2) * OC + dst] = 0.5f * (t[a][0] - t[a][1] + t[a][2]);
        up[(a * 4 + 3) * OC + dst] = t[a][2];
      }
    }
  });
}

// m: (16, O, nb*th*tw) -> out: (nb, O, Ho, Wo); one task per (b, o) plane.
void cpu_winograd_output(const Tensor& m, const Tensor& out, int64_t th, int64_t tw) {
  check_f32("winograd_output", out);
  int64_t nb = out.size(0), O = out.size(1), Ho = out.size(2), Wo = out.size(3), T = nb * th * tw;
  check_entries("winograd_output", m, O, T);
  TT_CHECK(Ho <= 2 * th && Wo <= 2 * tw, "winograd_output: out ", out.describe(), " exceeds ", th, " x ", tw, " tiles");
  const float* mp = m.data<float>();
  float* op = out.data<float>();
  auto plane = simd_pick(output_plane_avx512, output_plane_avx2, output_plane_default);
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, 16 * th * tw));
  parallel_for(0, nb * O, grain, [&](int64_t i0, int64_t i1) {
    std::vector<float> rows(static_cast<size_t>(4 * tw));
    for (int64_t i = i0; i < i1; ++i) {
      int64_t b = i / O, o = i % O;
      plane(mp + o * T + b * th * tw, m.stride(0), th, tw, Ho, Wo, rows.data(), op + i * Ho * Wo);
    }
  });
}

// go: (nb, O, Ho, Wo) -> z: (16, O, nb*th*tw); one task per (b, o) plane.
void cpu_winograd_grad_output(const Tensor& go, const Tensor& z, int64_t th, int64_t tw) {
  check_f32("winograd_grad_output", go);
  int64_t nb = go.size(0), O = go.size(1), Ho = go.size(2), Wo = go.size(3), T = nb * th * tw;
  check_entries("winograd_grad_output", z, O, T);
  TT_CHECK(Ho <= 2 * th && Wo <= 2 * tw, "winograd_grad_output: go ", go.describe(), " exceeds ", th, " x ", tw,
           " tiles");
  const float* gp = go.data<float>();
  float* zp = z.data<float>();
  auto plane = simd_pick(grad_output_plane_avx512, grad_output_plane_avx2, grad_output_plane_default);
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, 16 * th * tw));
  parallel_for(0, nb * O, grain, [&](int64_t i0, int64_t i1) {
    std::vector<float> pad(static_cast<size_t>(4 * th * tw));
    for (int64_t i = i0; i < i1; ++i) {
      int64_t b = i / O, o = i % O;
      plane(gp + i * Ho * Wo, Ho, Wo, th, tw, pad.data(), zp + o * T + b * th * tw, z.stride(0));
    }
  });
}

// du: (16, O, C) -> gw: (O, C, 3, 3) = G^T du[:, o, c] G, G^T = [1 .5 .5 0; 0 .5 -.5 0; 0 .5 .5 1].
void cpu_winograd_weight_grad(const Tensor& du, const Tensor& gw) {
  check_f32("winograd_weight_grad", du), check_f32("winograd_weight_grad", gw);
  int64_t O = gw.size(0), C = gw.size(1), OC = O * C;
  TT_CHECK(gw.size(2) == 3 && gw.size(3) == 3 && du.numel() == 16 * OC, "winograd_weight_grad: du ", du.describe(),
           " does not match gw ", gw.describe());
  const float* dp = du.data<float>();
  float* gp = gw.data<float>();
  parallel_for(0, OC, std::max<int64_t>(1, kGrainSize / 64), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      float d[4][4], t[3][4];
      for (int e = 0; e < 16; ++e) d[e / 4][e % 4] = dp[e * OC + i];
      for (int b = 0; b < 4; ++b) {  // G^T d
        t[0][b] = d[0][b] + 0.5f * (d[1][b] + d[2][b]);
        t[1][b] = 0.5f * (d[1][b] - d[2][b]);
        t[2][b] = 0.5f * (d[1][b] + d[2][b]) + d[3][b];
      }
      float* g = gp + i * 9;
      for (int r = 0; r < 3; ++r) {  // (G^T d) G
        g[r * 3 + 0] = t[r][0] + 0.5f * (t[r][1] + t[r][2]);
        g[r * 3 + 1] = 0.5f * (t[r][1] - t[r][2]);
        g[r * 3 + 2] = 0.5f * (t[r][1] + t[r][2]) + t[r][3];
      }
    }
  });
}

}  // namespace

TT_REGISTER_KERNELS(CPU, cpu, winograd_grad_output, winograd_weight_grad, winograd_input, winograd_weight,
                    winograd_output)

}  // namespace tt::cpu
