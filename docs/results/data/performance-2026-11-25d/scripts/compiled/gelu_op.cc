// Exact GELU forward in one pass: y = x * Phi(x) and its derivative d = Phi(x) + x * phi(x).
#define EIGEN_USE_THREADS
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"
#include "unsupported/Eigen/CXX11/Tensor"

using namespace tensorflow;

REGISTER_OP("GeluExactWithDerivative")
    .Input("x: float")
    .Output("y: float")
    .Output("d: float")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      c->set_output(0, c->input(0));
      c->set_output(1, c->input(0));
      return OkStatus();
    });

class GeluExactWithDerivativeOp : public OpKernel {
 public:
  explicit GeluExactWithDerivativeOp(OpKernelConstruction* c) : OpKernel(c) {}
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    Tensor *y = nullptr, *d = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &y));
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, input.shape(), &d));
    const float* xp = input.flat<float>().data();
    float* yp = y->flat<float>().data();
    float* dp = d->flat<float>().data();
    const int64_t n = input.NumElements();
    const int64_t block = 8192;
    const int64_t blocks = (n + block - 1) / block;
    auto work = [&](int64_t first, int64_t last) {
      for (int64_t b = first; b < last; ++b) {
        const int64_t start = b * block, size = std::min(block, n - start);
        Eigen::TensorMap<Eigen::Tensor<const float, 1>> x(xp + start, size);
        Eigen::TensorMap<Eigen::Tensor<float, 1>> yy(yp + start, size), dd(dp + start, size);
        dd = (x * -0.70710678118654752f).erfc() * 0.5f;                      // Phi(x)
        yy = x * dd;                                                          // x Phi(x)
        dd = dd + x * (x * x * -0.5f).exp() * 0.3989422804014327f;          // + x phi(x)
      }
    };
    auto* pool = ctx->device()->tensorflow_cpu_worker_threads()->workers;
    pool->ParallelFor(blocks, block * 60, work);
  }
};
REGISTER_KERNEL_BUILDER(Name("GeluExactWithDerivative").Device(DEVICE_CPU), GeluExactWithDerivativeOp);
