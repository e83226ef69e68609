#include "gpu_backend/queued_device.h"

#include <cstring>
#include <exception>
#include <utility>

#include "gpu_backend/ops.h"

namespace salus::test {

QueuedDevice::QueuedDevice(std::chrono::microseconds mark_delay)
    : cpu_(gpu::make_cpu_device()), mark_delay_(mark_delay), t0_(std::chrono::steady_clock::now()) {}

QueuedDevice::~QueuedDevice() = default;

std::unique_ptr<gpu::Ops> QueuedDevice::create_ops() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    ++contexts_;
  }
  return std::make_unique<QueuedOps>(*this);
}

int QueuedDevice::contexts() const {
  std::lock_guard<std::mutex> lk(mu_);
  return contexts_;
}

int QueuedDevice::marks_enqueued() const {
  std::lock_guard<std::mutex> lk(mu_);
  return marks_enqueued_;
}

std::string QueuedDevice::mark_log() const {
  std::lock_guard<std::mutex> lk(mu_);
  return log_;
}

void QueuedDevice::hold_before_mark(int n) {
  std::lock_guard<std::mutex> lk(mu_);
  hold_at_ = n;
}

bool QueuedDevice::wait_held(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(mu_);
  return cv_.wait_for(lk, timeout, [&] { return held_; });
}

void QueuedDevice::resume() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    hold_at_ = 0;
    held_ = false;
  }
  cv_.notify_all();
}

std::int64_t QueuedDevice::clock_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0_).count();
}

QueuedOps::QueuedOps(QueuedDevice& device) : device_(device), thread_(&QueuedOps::device_loop, this) {}

QueuedOps::~QueuedOps() {
  {
    std::lock_guard<std::mutex> lk(device_.mu_);
    quit_ = true;
  }
  device_.cv_.notify_all();
  thread_.join();
}

void QueuedOps::post(std::function<void()> op) {
  {
    std::lock_guard<std::mutex> lk(device_.mu_);
    queue_.push_back(Item{std::move(op), nullptr});
  }
  device_.cv_.notify_all();
}

void QueuedOps::device_loop() {
  std::unique_lock<std::mutex> lk(device_.mu_);
  for (;;) {
    device_.cv_.wait(lk, [&] { return quit_ || !queue_.empty(); });
    if (queue_.empty()) return;  // quit, and nothing left to run
    Item item = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    if (item.mark != nullptr) {
      const int n = ++device_.marks_run_;
      if (device_.hold_at_ == n) {
        device_.held_ = true;
        device_.cv_.notify_all();
        device_.cv_.wait(lk, [&] { return !device_.held_; });
      }
      if (device_.mark_delay_.count() > 0) {
        lk.unlock();
        std::this_thread::sleep_for(device_.mark_delay_);
        lk.lock();
      }
      // Reached, and what was queued behind it then, in one step: a host waiting for this mark
      // cannot enqueue anything before the device has looked.
      item.mark->reached = true;
      item.mark->at_ns = device_.clock_ns();
      device_.log_ += queue_.empty() ? 'g' : '.';
    } else {
      lk.unlock();
      std::string failure;
      try {
        item.run();
      } catch (const std::exception& e) {
        failure = e.what();
      }
      lk.lock();
      if (!failure.empty() && error_.empty()) error_ = failure;
    }
    busy_ = false;
    device_.cv_.notify_all();
  }
}

void QueuedOps::record_mark(gpu::DeviceMark& mark) {
  auto* m = dynamic_cast<QueuedMark*>(&mark);
  if (m == nullptr) throw gpu::DeviceError("record_mark: not a mark of the queued device");
  {
    std::lock_guard<std::mutex> lk(device_.mu_);
    // Re-recording moves the mark: not reached until the device gets to it again (cudaEventRecord).
    m->reached = false;
    m->at_ns = -1;
    ++device_.marks_enqueued_;
    queue_.push_back(Item{nullptr, m});
  }
  device_.cv_.notify_all();
}

core::TimeNs QueuedOps::mark_elapsed_ns(const gpu::DeviceMark& from, const gpu::DeviceMark& to) {
  const auto* a = dynamic_cast<const QueuedMark*>(&from);
  const auto* b = dynamic_cast<const QueuedMark*>(&to);
  if (a == nullptr || b == nullptr) throw gpu::DeviceError("mark_elapsed_ns: not marks of the queued device");
  std::unique_lock<std::mutex> lk(device_.mu_);
  device_.cv_.wait(lk, [&] { return (a->reached && b->reached) || !error_.empty(); });
  if (!error_.empty()) throw gpu::DeviceError(error_);
  return b->at_ns - a->at_ns;
}

void QueuedOps::synchronize() {
  std::unique_lock<std::mutex> lk(device_.mu_);
  device_.cv_.wait(lk, [&] { return queue_.empty() && !busy_; });
  if (!error_.empty()) throw gpu::DeviceError(error_);
}

void QueuedOps::to_host(const void* device_src, void* host_dst, core::Bytes bytes) {
  post([=] { std::memcpy(host_dst, device_src, static_cast<std::size_t>(bytes)); });
  synchronize();
}

void QueuedOps::to_device(const void* host_src, void* device_dst, core::Bytes bytes) {
  post([=] { std::memcpy(device_dst, host_src, static_cast<std::size_t>(bytes)); });
  synchronize();
}

// --- The operations, enqueued (arguments copied: shapes by value, pointers as they are) ------

void QueuedOps::conv_forward(const gpu::ConvShape& cs, const float* x, const float* w, const float* bias, float* y,
                             void* workspace, core::Bytes workspace_bytes) {
  post([=, this] { inner_.conv_forward(cs, x, w, bias, y, workspace, workspace_bytes); });
}
void QueuedOps::conv_backward_data(const gpu::ConvShape& cs, const float* w, const float* dy, float* dx,
                                   void* workspace, core::Bytes workspace_bytes) {
  post([=, this] { inner_.conv_backward_data(cs, w, dy, dx, workspace, workspace_bytes); });
}
void QueuedOps::conv_backward_filter(const gpu::ConvShape& cs, const float* x, const float* dy, float* dw,
                                     float* dbias, void* workspace, core::Bytes workspace_bytes) {
  post([=, this] { inner_.conv_backward_filter(cs, x, dy, dw, dbias, workspace, workspace_bytes); });
}
void QueuedOps::batchnorm_forward_train(int n, int c, int h, int w, const float* x, const float* gamma,
                                        const float* beta, float* y, float* running_mean, float* running_var,
                                        float* save_mean, float* save_invstd, double momentum, double eps) {
  post([=, this] {
    inner_.batchnorm_forward_train(n, c, h, w, x, gamma, beta, y, running_mean, running_var, save_mean, save_invstd,
                                   momentum, eps);
  });
}
void QueuedOps::batchnorm_forward_infer(int n, int c, int h, int w, const float* x, const float* gamma,
                                        const float* beta, const float* running_mean, const float* running_var,
                                        float* y, double eps) {
  post([=, this] { inner_.batchnorm_forward_infer(n, c, h, w, x, gamma, beta, running_mean, running_var, y, eps); });
}
void QueuedOps::batchnorm_backward(int n, int c, int h, int w, const float* x, const float* dy, const float* gamma,
                                   const float* save_mean, const float* save_invstd, float* dx, float* dgamma,
                                   float* dbeta, double eps) {
  post([=, this] {
    inner_.batchnorm_backward(n, c, h, w, x, dy, gamma, save_mean, save_invstd, dx, dgamma, dbeta, eps);
  });
}
void QueuedOps::relu_forward(std::int64_t count, const float* x, float* y) {
  post([=, this] { inner_.relu_forward(count, x, y); });
}
void QueuedOps::relu_backward(std::int64_t count, const float* y, const float* dy, float* dx) {
  post([=, this] { inner_.relu_backward(count, y, dy, dx); });
}
void QueuedOps::add(std::int64_t count, const float* a, const float* b, float* y) {
  post([=, this] { inner_.add(count, a, b, y); });
}
void QueuedOps::accumulate(std::int64_t count, const float* src, float* dst) {
  post([=, this] { inner_.accumulate(count, src, dst); });
}
void QueuedOps::fill(std::int64_t count, float* x, float value) {
  post([=, this] { inner_.fill(count, x, value); });
}
void QueuedOps::pool_forward(const gpu::PoolShape& ps, const float* x, float* y) {
  post([=, this] { inner_.pool_forward(ps, x, y); });
}
void QueuedOps::pool_backward(const gpu::PoolShape& ps, const float* x, const float* y, const float* dy, float* dx) {
  post([=, this] { inner_.pool_backward(ps, x, y, dy, dx); });
}
void QueuedOps::fc_forward(int n, int in, int out, const float* x, const float* w, const float* b, float* y) {
  post([=, this] { inner_.fc_forward(n, in, out, x, w, b, y); });
}
void QueuedOps::fc_backward(int n, int in, int out, const float* x, const float* w, const float* dy, float* dx,
                            float* dw, float* db) {
  post([=, this] { inner_.fc_backward(n, in, out, x, w, dy, dx, dw, db); });
}
void QueuedOps::copy_channels(int n, int hw, const float* src, int src_c, int src_offset, float* dst, int dst_c,
                              int dst_offset, int channels, bool accumulate) {
  post([=, this] { inner_.copy_channels(n, hw, src, src_c, src_offset, dst, dst_c, dst_offset, channels, accumulate); });
}
void QueuedOps::softmax_xent_forward(int n, int classes, const float* logits, const std::int32_t* labels,
                                     float* probs, float* loss) {
  post([=, this] { inner_.softmax_xent_forward(n, classes, logits, labels, probs, loss); });
}
void QueuedOps::softmax_xent_backward(int n, int classes, const float* probs, const std::int32_t* labels,
                                      float* dlogits) {
  post([=, this] { inner_.softmax_xent_backward(n, classes, probs, labels, dlogits); });
}
void QueuedOps::sgd_momentum(std::int64_t count, float* w, const float* dw, float* v, float lr, float momentum,
                             float weight_decay) {
  post([=, this] { inner_.sgd_momentum(count, w, dw, v, lr, momentum, weight_decay); });
}
void QueuedOps::fill_uniform(std::int64_t count, float* x, float lo, float hi, std::uint64_t seed) {
  post([=, this] { inner_.fill_uniform(count, x, lo, hi, seed); });
}
void QueuedOps::fill_labels(int n, std::int32_t* labels, int classes, std::uint64_t seed) {
  post([=, this] { inner_.fill_labels(n, labels, classes, seed); });
}

}  // namespace salus::test
