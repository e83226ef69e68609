#pragma once
// A test double of a device that queues work, as a CUDA stream does, computing with the CPU
// device's operations: each context (Ops) has a device thread that runs what was enqueued, in
// order, while the caller goes on; marks take the host clock when the device thread reaches them
// (as CUDA events take the device's); synchronize(), to_host() and to_device() wait for the
// context's queue. So the real executor takes the path it takes on CUDA (its lookahead, its
// device-clock timing) on a machine without a GPU, and a test can see what the device saw: at
// each mark, whether anything was queued behind it (a device that runs dry at an iteration
// boundary waits for the host: a round trip), and it can hold the device before a chosen mark.
//
// One mutex guards every context's queue and every mark of the device (a test device: simple
// over fast).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpu_backend/cpu_ops.h"
#include "gpu_backend/device.h"

namespace salus::test {

class QueuedDevice;

/// A mark of a QueuedDevice: the host clock (ns since its device was made) when a device thread
/// reached it.
class QueuedMark final : public gpu::DeviceMark {
 public:
  bool reached = false;     // guarded by the device's mutex
  std::int64_t at_ns = -1;  // ditto
};

class QueuedOps;

class QueuedDevice final : public gpu::Device {
 public:
  /// mark_delay: the device thread sleeps this long before each mark (kernels at the end of an
  /// iteration), so the host has time to enqueue behind it; it keeps the tests' observations
  /// independent of how fast this machine runs the CPU operations.
  explicit QueuedDevice(std::chrono::microseconds mark_delay = std::chrono::microseconds(0));
  ~QueuedDevice() override;

  gpu::DeviceKind kind() const override { return gpu::DeviceKind::kCpu; }
  std::string name() const override { return "cpu (queued)"; }
  core::Bytes free_memory() const override { return cpu_->free_memory(); }
  std::optional<core::Bytes> used_memory() const override { return std::nullopt; }
  gpu::MathMode math() const override { return gpu::MathMode::kFp32; }
  void* allocate(core::Bytes bytes) override { return cpu_->allocate(bytes); }
  void deallocate(void* p) override { cpu_->deallocate(p); }
  std::unique_ptr<gpu::Ops> create_ops() override;

  /// Contexts made so far.
  int contexts() const;
  /// Marks enqueued so far (record_mark calls), over every context.
  int marks_enqueued() const;
  /// At each mark a device thread ran, in order over every context: 'g' when its context's queue
  /// was empty right after the mark (the device ran dry there and waits for the host), '.' when
  /// more work was already queued behind it.
  std::string mark_log() const;
  /// The n-th mark (1-based, counted over every context) a device thread is about to run waits
  /// until resume(); 0 holds none.
  void hold_before_mark(int n);
  /// Waits (up to `timeout`) until a device thread is held; false if none got there in time.
  bool wait_held(std::chrono::milliseconds timeout);
  /// Lets a held device thread go on (and holds no later mark).
  void resume();

 private:
  friend class QueuedOps;
  std::int64_t clock_ns() const;

  std::unique_ptr<gpu::Device> cpu_;
  const std::chrono::microseconds mark_delay_;
  const std::chrono::steady_clock::time_point t0_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int contexts_ = 0;
  int marks_enqueued_ = 0;
  int marks_run_ = 0;
  int hold_at_ = 0;
  bool held_ = false;
  std::string log_;
};

/// One context of a QueuedDevice: the CPU device's operations, run in order on its own device
/// thread.
class QueuedOps final : public gpu::Ops {
 public:
  explicit QueuedOps(QueuedDevice& device);
  ~QueuedOps() override;

  core::Bytes conv_workspace_bytes(const gpu::ConvShape& cs) override { return inner_.conv_workspace_bytes(cs); }
  void conv_forward(const gpu::ConvShape& cs, const float* x, const float* w, const float* bias, float* y,
                    void* workspace, core::Bytes workspace_bytes) override;
  void conv_backward_data(const gpu::ConvShape& cs, const float* w, const float* dy, float* dx, void* workspace,
                          core::Bytes workspace_bytes) override;
  void conv_backward_filter(const gpu::ConvShape& cs, const float* x, const float* dy, float* dw, float* dbias,
                            void* workspace, core::Bytes workspace_bytes) override;
  void batchnorm_forward_train(int n, int c, int h, int w, const float* x, const float* gamma, const float* beta,
                               float* y, float* running_mean, float* running_var, float* save_mean,
                               float* save_invstd, double momentum, double eps) override;
  void batchnorm_forward_infer(int n, int c, int h, int w, const float* x, const float* gamma, const float* beta,
                               const float* running_mean, const float* running_var, float* y, double eps) override;
  void batchnorm_backward(int n, int c, int h, int w, const float* x, const float* dy, const float* gamma,
                          const float* save_mean, const float* save_invstd, float* dx, float* dgamma, float* dbeta,
                          double eps) override;
  void relu_forward(std::int64_t count, const float* x, float* y) override;
  void relu_backward(std::int64_t count, const float* y, const float* dy, float* dx) override;
  void add(std::int64_t count, const float* a, const float* b, float* y) override;
  void accumulate(std::int64_t count, const float* src, float* dst) override;
  void fill(std::int64_t count, float* x, float value) override;
  void pool_forward(const gpu::PoolShape& ps, const float* x, float* y) override;
  void pool_backward(const gpu::PoolShape& ps, const float* x, const float* y, const float* dy, float* dx) override;
  void fc_forward(int n, int in, int out, const float* x, const float* w, const float* b, float* y) override;
  void fc_backward(int n, int in, int out, const float* x, const float* w, const float* dy, float* dx, float* dw,
                   float* db) override;
  void copy_channels(int n, int hw, const float* src, int src_c, int src_offset, float* dst, int dst_c,
                     int dst_offset, int channels, bool accumulate) override;
  void softmax_xent_forward(int n, int classes, const float* logits, const std::int32_t* labels, float* probs,
                            float* loss) override;
  void softmax_xent_backward(int n, int classes, const float* probs, const std::int32_t* labels,
                             float* dlogits) override;
  void sgd_momentum(std::int64_t count, float* w, const float* dw, float* v, float lr, float momentum,
                    float weight_decay) override;
  void fill_uniform(std::int64_t count, float* x, float lo, float hi, std::uint64_t seed) override;
  void fill_labels(int n, std::int32_t* labels, int classes, std::uint64_t seed) override;
  core::Bytes blas_workspace_bytes() override { return 0; }
  void set_blas_workspace(void* /*workspace*/, core::Bytes /*bytes*/) override {}

  std::unique_ptr<gpu::DeviceMark> create_mark() override { return std::make_unique<QueuedMark>(); }
  void record_mark(gpu::DeviceMark& mark) override;
  core::TimeNs mark_elapsed_ns(const gpu::DeviceMark& from, const gpu::DeviceMark& to) override;

  void to_host(const void* device_src, void* host_dst, core::Bytes bytes) override;
  void to_device(const void* host_src, void* device_dst, core::Bytes bytes) override;
  void synchronize() override;

 private:
  struct Item {
    std::function<void()> run;     // an operation, or empty for a mark
    QueuedMark* mark = nullptr;
  };
  void post(std::function<void()> op);
  void device_loop();

  QueuedDevice& device_;
  gpu::CpuOps inner_;
  std::deque<Item> queue_;  // guarded by device_.mu_
  bool busy_ = false;       // the device thread runs an item; ditto
  bool quit_ = false;       // ditto
  std::string error_;       // an operation threw: given back by the next wait; ditto
  std::thread thread_;
};

}  // namespace salus::test
