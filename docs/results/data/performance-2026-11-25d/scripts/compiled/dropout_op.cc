// Dropout in one pass, its mask a counter hash of (seed, element index): the same call on the
// upstream gradient with the same seed is its gradient, so no mask is stored.
#define EIGEN_USE_THREADS
#include "tensorflow/core/framework/op.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/framework/shape_inference.h"

using namespace tensorflow;

REGISTER_OP("HashDropout")
    .Input("x: float")
    .Input("seed: int32")
    .Attr("threshold: int")
    .Attr("scale: float")
    .Output("y: float")
    .SetShapeFn([](shape_inference::InferenceContext* c) {
      c->set_output(0, c->input(0));
      return OkStatus();
    });

static inline uint32_t fmix32(uint32_t h) {
  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
  return h;
}

class HashDropoutOp : public OpKernel {
 public:
  explicit HashDropoutOp(OpKernelConstruction* c) : OpKernel(c) {
    OP_REQUIRES_OK(c, c->GetAttr("threshold", &threshold_));
    OP_REQUIRES_OK(c, c->GetAttr("scale", &scale_));
  }
  void Compute(OpKernelContext* ctx) override {
    const Tensor& input = ctx->input(0);
    auto seed = ctx->input(1).flat<int32>();
    const uint32_t key = fmix32(uint32_t(seed(0)) * 0x9e3779b9u ^ uint32_t(seed(1)));
    Tensor* y = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(0, input.shape(), &y));
    const float* xp = input.flat<float>().data();
    float* yp = y->flat<float>().data();
    const int64_t n = input.NumElements();
    const uint32_t threshold = uint32_t(threshold_);
    const float scale = scale_;
    auto work = [&](int64_t first, int64_t last) {
      for (int64_t i = first; i < last; ++i) {
        const uint32_t h = fmix32(uint32_t(i) * 0x9e3779b9u + key) >> 16;
        yp[i] = h >= threshold ? xp[i] * scale : 0.0f;
      }
    };
    ctx->device()->tensorflow_cpu_worker_threads()->workers->ParallelFor(n, 4, work);
  }
 private:
  int threshold_;
  float scale_;
};
REGISTER_KERNEL_BUILDER(Name("HashDropout").Device(DEVICE_CPU).HostMemory("seed"), HashDropoutOp);
