// Fused optimizer kernels (ops/optim.h) against double-precision loops of PyTorch's update rules,
// float32 and bfloat16 (plus float64/float16 for SGD/Adam), sized to run multithreaded.
#include <algorithm>
#include <cmath>
#include "nn_test_util.h"
#include "tinytorch/ops/elementwise.h"
#include "tinytorch/ops/optim.h"

using namespace tt;
using namespace tt::testing;

namespace {

constexpr int64_t kN = 70001;  // > several parallel_for chunks, odd to leave a ragged tail

double step_tol(DType d) {
  switch (d) {
    case DType::Float64: return 1e-12;
    case DType::Float32: return 1e-5;
    case DType::Float16: return 1e-2;
    default: return 4e-2;
  }
}

void expect_close(const Tensor& got, const std::vector<double>& want, DType d, const char* what) {
  std::vector<double> g = to_vec(got);
  ASSERT_EQ(g.size(), want.size());
  double tol = step_tol(d);
  for (size_t i = 0; i < g.size(); ++i)
    ASSERT_NEAR(g[i], want[i], tol * (1 + std::abs(want[i]))) << what << " " << dtype_name(d) << " at " << i;
}

Tensor zeros(const Shape& s, DType d) { return full(s, 0.0, d); }

Tensor step_tensor(double v) {
  Tensor t = Tensor::empty({}, DType::Float32);
  *t.data<float>() = static_cast<float>(v);
  return t;
}

}  // namespace

TEST(Optim, SgdMomentumNesterovWeightDecay) {
  for (DType d : kFloatTypes)
    for (bool nesterov : {false, true}) {
      Tensor p = rand_tensor({kN}, d, 1), buf = zeros({kN}, d);
      std::vector<double> rp = to_vec(p), rb(kN);
      const double lr = 0.1, mom = 0.9, damp = nesterov ? 0.0 : 0.25, wd = 0.01;
      int64_t v0 = p.version();
      for (int step = 0; step < 3; ++step) {
        Tensor g = rand_tensor({kN}, d, 100 + step);
        std::vector<double> rg = to_vec(g);
        sgd_step_multi_({p}, {g}, {buf}, lr, mom, damp, wd, nesterov, /*maximize=*/step == 2,
                        /*first_step=*/step == 0);
        for (int64_t i = 0; i < kN; ++i) {
          double gi = (step == 2 ? -rg[i] : rg[i]) + wd * rp[i];
          rb[i] = step == 0 ? gi : mom * rb[i] + (1 - damp) * gi;
          gi = nesterov ? gi + mom * rb[i] : rb[i];
          rp[i] -= lr * gi;
        }
      }
      expect_close(p, rp, d, "sgd param");
      expect_close(buf, rb, d, "sgd momentum_buffer");
      EXPECT_EQ(p.version(), v0 + 3);
    }
}

TEST(Optim, AdamAndAdamW) {
  for (DType d : kFloatTypes)
    for (bool amsgrad : {false, true})
      for (bool decoupled : {false, true}) {
        Tensor p = rand_tensor({kN}, d, 2), m = zeros({kN}, d), v = zeros({kN}, d), vmax = zeros({kN}, d);
        std::vector<double> rp = to_vec(p), rm(kN), rv(kN), rmax(kN);
        std::vector<Tensor> steps = {step_tensor(0)};
        const double lr = 0.01, b1 = 0.9, b2 = 0.99, eps = 1e-8, wd = 0.1;
        for (int t = 1; t <= 3; ++t) {
          Tensor g = rand_tensor({kN}, d, 200 + t);
          std::vector<double> rg = to_vec(g);
          adam_step_multi_({p}, {g}, {m}, {v}, amsgrad ? TensorList{vmax} : TensorList{}, steps, lr, b1, b2, eps, wd,
                           amsgrad, false, decoupled);
          double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
          for (int64_t i = 0; i < kN; ++i) {
            double gi = rg[i];
            if (decoupled) rp[i] *= 1 - lr * wd;
            else gi += wd * rp[i];
            rm[i] = b1 * rm[i] + (1 - b1) * gi;
            rv[i] = b2 * rv[i] + (1 - b2) * gi * gi;
            rmax[i] = std::max(rmax[i], rv[i]);
            double vv = amsgrad ? rmax[i] : rv[i];
            rp[i] -= lr / bc1 * rm[i] / (std::sqrt(vv) / std::sqrt(bc2) + eps);
          }
        }
        expect_close(p, rp, d, "adam param");
        expect_close(m, rm, d, "adam exp_avg");
        expect_close(v, rv, d, "adam exp_avg_sq");
      }
}

TEST(Optim, AdamMultiIncrementsSteps) {
  std::vector<Tensor> ps = {rand_tensor({kN}, DType::Float32, 3), rand_tensor({5, 7}, DType::Float32, 4)};
  std::vector<Tensor> gs = {rand_tensor({kN}, DType::Float32, 5), rand_tensor({5, 7}, DType::Float32, 6)};
  std::vector<Tensor> ms = {zeros({kN}, DType::Float32), zeros({5, 7}, DType::Float32)};
  std::vector<Tensor> vs = {zeros({kN}, DType::Float32), zeros({5, 7}, DType::Float32)};
  std::vector<Tensor> steps = {step_tensor(0), step_tensor(0)};
  // Reference: the first tensor alone, on copies.
  Tensor p0 = ps[0].clone(), m0 = ms[0].clone(), v0 = vs[0].clone(), s0 = step_tensor(0);
  for (int t = 1; t <= 2; ++t) {
    adam_step_multi_(ps, gs, ms, vs, {}, steps, 1e-3, 0.9, 0.999, 1e-8, 0, false, false, false);
    adam_step_multi_({p0}, {gs[0]}, {m0}, {v0}, {}, {s0}, 1e-3, 0.9, 0.999, 1e-8, 0, false, false, false);
  }
  EXPECT_EQ(*steps[0].data<float>(), 2.0f);
  EXPECT_EQ(*steps[1].data<float>(), 2.0f);
  expect_close(ps[0], to_vec(p0), DType::Float64, "multi vs single");
}

TEST(Optim, Adadelta) {
  for (DType d : {DType::Float32, DType::BFloat16, DType::Float64}) {
    Tensor p = rand_tensor({kN}, d, 7), sq = zeros({kN}, d), acc = zeros({kN}, d);
    std::vector<double> rp = to_vec(p), rsq(kN), racc(kN);
    std::vector<Tensor> steps = {step_tensor(0)};
    const double lr = 1.0, rho = 0.9, eps = 1e-6, wd = 0.05;
    for (int step = 0; step < 3; ++step) {
      Tensor g = rand_tensor({kN}, d, 300 + step);
      std::vector<double> rg = to_vec(g);
      adadelta_step_multi_({p}, {g}, {sq}, {acc}, steps, lr, rho, eps, wd, false);
      for (int64_t i = 0; i < kN; ++i) {
        double gi = rg[i] + wd * rp[i];
        rsq[i] = rho * rsq[i] + (1 - rho) * gi * gi;
        double delta = std::sqrt(racc[i] + eps) / std::sqrt(rsq[i] + eps) * gi;
        racc[i] = rho * racc[i] + (1 - rho) * delta * delta;
        rp[i] -= lr * delta;
      }
    }
    expect_close(p, rp, d, "adadelta param");
    expect_close(acc, racc, d, "adadelta acc_delta");
  }
}

TEST(Optim, RmspropCenteredMomentum) {
  for (DType d : {DType::Float32, DType::BFloat16}) {
    Tensor p = rand_tensor({kN}, d, 8), sq = zeros({kN}, d), buf = zeros({kN}, d), ga = zeros({kN}, d);
    std::vector<Tensor> steps = {step_tensor(0)};
    std::vector<double> rp = to_vec(p), rsq(kN), rbuf(kN), rga(kN);
    const double lr = 0.01, alpha = 0.9, eps = 1e-8, mom = 0.5;
    for (int step = 0; step < 3; ++step) {
      Tensor g = rand_tensor({kN}, d, 400 + step);
      std::vector<double> rg = to_vec(g);
      rmsprop_step_multi_({p}, {g}, {sq}, {buf}, {ga}, steps, lr, alpha, eps, 0, mom, true, false);
      for (int64_t i = 0; i < kN; ++i) {
        double gi = rg[i];
        rsq[i] = alpha * rsq[i] + (1 - alpha) * gi * gi;
        rga[i] += (1 - alpha) * (gi - rga[i]);
        double avg = std::sqrt(rsq[i] - rga[i] * rga[i]) + eps;
        rbuf[i] = mom * rbuf[i] + gi / avg;
        rp[i] -= lr * rbuf[i];
      }
    }
    expect_close(p, rp, d, "rmsprop param");
  }
}

TEST(Optim, AdagradAdamaxNadamRadam) {
  for (DType d : {DType::Float32, DType::BFloat16}) {
    const int64_t n = 4099;
    Tensor pa = rand_tensor({n}, d, 9), sum = full({n}, 0.1, d);
    Tensor px = pa.clone(), mx = zeros({n}, d), ux = zeros({n}, d);
    Tensor pn = pa.clone(), mn = zeros({n}, d), vn = zeros({n}, d), mu = step_tensor(1);
    Tensor pr = pa.clone(), mr = zeros({n}, d), vr = zeros({n}, d);
    Tensor sa = step_tensor(0), sx = step_tensor(0), sn = step_tensor(0), sr = step_tensor(0);
    std::vector<double> ra = to_vec(pa), rsum(n, 0.1), rx = ra, rmx(n), rux(n), rn = ra, rmn(n), rvn(n), rr = ra,
                        rmr(n), rvr(n);
    const double lr = 0.05, b1 = 0.5, b2 = 0.6, eps = 1e-8, lr_decay = 0.1, md = 4e-3;
    double mu_product = 1;
    for (int t = 1; t <= 4; ++t) {
      Tensor g = rand_tensor({n}, d, 500 + t);
      std::vector<double> rg = to_vec(g);
      adagrad_step_multi_({pa}, {g}, {sum}, {sa}, lr, lr_decay, 0, 1e-10, false);
      adamax_step_multi_({px}, {g}, {mx}, {ux}, {sx}, lr, b1, b2, eps, 0, false);
      nadam_step_multi_({pn}, {g}, {mn}, {vn}, {mu}, {sn}, lr, b1, b2, eps, 0, md, false, false);
      radam_step_multi_({pr}, {g}, {mr}, {vr}, {sr}, lr, b1, b2, eps, 0, false, false);
      double clr = lr / (1 + (t - 1) * lr_decay);
      double m_t = b1 * (1 - 0.5 * std::pow(0.96, t * md)), m_next = b1 * (1 - 0.5 * std::pow(0.96, (t + 1) * md));
      mu_product *= m_t;
      double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
      double rho_inf = 2 / (1 - b2) - 1, rho_t = rho_inf - 2 * t * std::pow(b2, t) / bc2;
      for (int64_t i = 0; i < n; ++i) {
        double gi = rg[i];
        rsum[i] += gi * gi;
        ra[i] -= clr * gi / (std::sqrt(rsum[i]) + 1e-10);
        rmx[i] = b1 * rmx[i] + (1 - b1) * gi;
        rux[i] = std::max(b2 * rux[i], std::abs(gi) + eps);
        rx[i] -= lr / bc1 * rmx[i] / rux[i];
        rmn[i] = b1 * rmn[i] + (1 - b1) * gi;
        rvn[i] = b2 * rvn[i] + (1 - b2) * gi * gi;
        double denom = std::sqrt(rvn[i] / bc2) + eps;
        rn[i] += -lr * (1 - m_t) / (1 - mu_product) * gi / denom - lr * m_next / (1 - mu_product * m_next) * rmn[i] / denom;
        rmr[i] = b1 * rmr[i] + (1 - b1) * gi;
        rvr[i] = b2 * rvr[i] + (1 - b2) * gi * gi;
        if (rho_t > 5) {
          double rect = std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
          rr[i] -= rmr[i] / bc1 * lr * std::sqrt(bc2) / (std::sqrt(rvr[i]) + eps) * rect;
        } else {
          rr[i] -= rmr[i] / bc1 * lr;
        }
      }
    }
    expect_close(pa, ra, d, "adagrad param");
    expect_close(px, rx, d, "adamax param");
    expect_close(pn, rn, d, "nadam param");
    expect_close(pr, rr, d, "radam param");
    EXPECT_NEAR(*mu.data<float>(), mu_product, 1e-6);
  }
}

TEST(Optim, Errors) {
  Tensor p = zeros({2, 3}, DType::Float32), g = zeros({2, 3}, DType::Float32);
  Tensor m = zeros({2, 3}, DType::Float32), v = zeros({2, 3}, DType::Float32);
  std::vector<Tensor> steps = {step_tensor(0)};
  auto adam = [&](const Tensor& grad, const Tensor& exp_avg, double lr, double beta1) {
    adam_step_multi_({p}, {grad}, {exp_avg}, {v}, {}, steps, lr, beta1, 0.999, 1e-8, 0, false, false, false);
  };
  EXPECT_THROW(adam(zeros({3, 2}, DType::Float32), m, 0.1, 0.9), std::runtime_error);
  EXPECT_THROW(adam(g, zeros({2, 3}, DType::Float64), 0.1, 0.9), std::runtime_error);
  EXPECT_THROW(adam(g, m, -0.1, 0.9), std::invalid_argument);
  EXPECT_THROW(adam(g, m, 0.1, 1.0), std::invalid_argument);
  EXPECT_THROW(adam(g, p, 0.1, 0.9), std::runtime_error);  // state sharing the param's memory
  EXPECT_THROW(adam_step_multi_({p}, {g}, {m}, {v}, {}, {Tensor()}, 0.1, 0.9, 0.999, 1e-8, 0, false, false, false),
               std::runtime_error);
  EXPECT_THROW(sgd_step_multi_({p.transpose(0, 1)}, {g.transpose(0, 1)}, {}, 0.1, 0, 0, 0, false, false, false),
               std::runtime_error);
  EXPECT_THROW(sgd_step_multi_({p, m}, {g}, {}, 0.1, 0, 0, 0, false, false, false), std::runtime_error);
  EXPECT_THROW(sgd_step_multi_({p}, {g}, {}, 0.1, 0.9, 0, 0, false, false, false), std::runtime_error);
  try {
    adam(zeros({3}, DType::Float32), m, 0.1, 0.9);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "adam_step_multi_: grad of tensor 0 has shape [3] but its param has shape [2, 3]");
  }
  try {
    adam(g, m, 0.1, 1.0);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "adam_step_multi_: Invalid beta parameter at index 0: 1");
  }
  EXPECT_EQ(*steps[0].data<float>(), 0.0f);  // nothing ran
}
