// Every operation of ops.h on the first CUDA GPU against the CPU reference device, on small shapes
// with the same inputs (ggml's test-backend-ops). Runs only where a GPU is visible (gpu_main.cpp).
//
// Outputs start as NaN on both devices, so an element one of them fails to write is caught.
// Tolerances: max |gpu - cpu| <= tol * max(1, max |cpu|). Operations whose CUDA kernels round
// step by step like the CPU (element-wise, max pooling backward, sgd, generators) must match
// exactly; cuDNN and cuBLAS sum in other orders.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpu_backend/cuda_ops.cuh"
#include "gpu_backend/device.h"
#include "gpu_backend/ops.h"
#include "gpu_backend/shapes.h"

namespace salus::gpu {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> random_values(std::int64_t count, float lo, float hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (float& x : v) x = dist(gen);
  return v;
}

std::vector<std::int32_t> random_labels(int n, int classes, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int32_t> dist(0, classes - 1);
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = dist(gen);
  return v;
}


/// max |gpu - cpu| <= tol * max(1, max |cpu|), every value finite on both devices.
void check_close(const std::vector<float>& gpu, const std::vector<float>& cpu, double tol, const std::string& what) {
  REQUIRE(gpu.size() == cpu.size());
  double max_diff = 0.0, max_ref = 0.0;
  std::size_t worst = 0, non_finite = 0, first_non_finite = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    if (!std::isfinite(gpu[i]) || !std::isfinite(cpu[i])) {
      if (non_finite++ == 0) first_non_finite = i;
      continue;
    }
    const double diff = std::fabs(static_cast<double>(gpu[i]) - cpu[i]);
    if (diff > max_diff) {
      max_diff = diff;
      worst = i;
    }
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(cpu[i])));
  }
  INFO(what, ": ", cpu.size(), " values, max |gpu - cpu| = ", max_diff, " at ", worst, " (gpu ",
       gpu.empty() ? 0.0f : gpu[worst], ", cpu ", cpu.empty() ? 0.0f : cpu[worst], "), max |cpu| = ", max_ref,
       ", non-finite: ", non_finite, " (first at ", first_non_finite, ")");
  CHECK(non_finite == 0);
  CHECK(max_diff <= tol * std::max(1.0, max_ref));
}

/// Bit for bit.
template <class T>
void check_identical(const std::vector<T>& gpu, const std::vector<T>& cpu, const std::string& what) {
  REQUIRE(gpu.size() == cpu.size());
  std::size_t mismatches = 0, first = 0;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    if (std::memcmp(&gpu[i], &cpu[i], sizeof(T)) != 0 && mismatches++ == 0) first = i;
  }
  INFO(what, ": ", mismatches, " of ", cpu.size(), " differ, first at ", first, " (gpu ",
       gpu.empty() ? T{} : gpu[first], ", cpu ", cpu.empty() ? T{} : cpu[first], ")");
  CHECK(mismatches == 0);
}

/// A buffer with one copy on each device.
template <class T>
struct Mirror {
  T* cpu = nullptr;
  T* gpu = nullptr;
  std::int64_t count = 0;
  Bytes bytes() const { return count * static_cast<Bytes>(sizeof(T)); }
};

/// The CPU reference device and CUDA device 0 side by side, each with one execution context,
/// and the buffers allocated on both (freed at the end).
class Twin {
 public:
  Twin()
      : cpu_device_(make_cpu_device()),
        cuda_device_(make_cuda_device(0)),
        cpu_(cpu_device_->create_ops()),
        gpu_(cuda_device_->create_ops()) {}

  ~Twin() {
    try {
      gpu_->synchronize();
    } catch (const DeviceError&) {  // already reported by the failing check
    }
    for (void* p : cpu_buffers_) cpu_device_->deallocate(p);
    for (void* p : gpu_buffers_) {
      try {
        cuda_device_->deallocate(p);
      } catch (const DeviceError&) {
      }
    }
  }
  Twin(const Twin&) = delete;
  Twin& operator=(const Twin&) = delete;

  Ops& cpu() { return *cpu_; }
  Ops& gpu() { return *gpu_; }
  Device& cuda_device() { return *cuda_device_; }

  /// The same values on both devices.
  template <class T>
  Mirror<T> upload(const std::vector<T>& host) {
    Mirror<T> m = allocate<T>(static_cast<std::int64_t>(host.size()));
    cpu_->to_device(host.data(), m.cpu, m.bytes());
    gpu_->to_device(host.data(), m.gpu, m.bytes());
    return m;
  }
  /// An output buffer, NaN on both devices until an operation writes it.
  Mirror<float> output(std::int64_t count) { return upload(std::vector<float>(static_cast<std::size_t>(count), kNaN)); }

  template <class T>
  std::vector<T> cpu_values(const Mirror<T>& m) {
    std::vector<T> v(static_cast<std::size_t>(m.count));
    cpu_->to_host(m.cpu, v.data(), m.bytes());
    return v;
  }
  template <class T>
  std::vector<T> gpu_values(const Mirror<T>& m) {
    std::vector<T> v(static_cast<std::size_t>(m.count));
    gpu_->to_host(m.gpu, v.data(), m.bytes());
    return v;
  }

  void check_close(const Mirror<float>& m, double tol, const std::string& what) {
    salus::gpu::check_close(gpu_values(m), cpu_values(m), tol, what);
  }
  template <class T>
  void check_identical(const Mirror<T>& m, const std::string& what) {
    salus::gpu::check_identical(gpu_values(m), cpu_values(m), what);
  }

  /// Raw device memory: `cpu_bytes` on the CPU device and `gpu_bytes` on the GPU.
  std::pair<void*, void*> workspace(Bytes cpu_bytes, Bytes gpu_bytes) {
    void* c = cpu_device_->allocate(std::max<Bytes>(cpu_bytes, 1));
    cpu_buffers_.push_back(c);
    void* g = cuda_device_->allocate(std::max<Bytes>(gpu_bytes, 1));
    gpu_buffers_.push_back(g);
    return {c, g};
  }

 private:
  template <class T>
  Mirror<T> allocate(std::int64_t count) {
    Mirror<T> m;
    m.count = count;
    m.cpu = static_cast<T*>(cpu_device_->allocate(m.bytes()));
    cpu_buffers_.push_back(m.cpu);
    m.gpu = static_cast<T*>(cuda_device_->allocate(m.bytes()));
    gpu_buffers_.push_back(m.gpu);
    return m;
  }

  std::unique_ptr<Device> cpu_device_;
  std::unique_ptr<Device> cuda_device_;
  std::unique_ptr<Ops> cpu_;
  std::unique_ptr<Ops> gpu_;
  std::vector<void*> cpu_buffers_;
  std::vector<void*> gpu_buffers_;
};

// --- The device ---------------------------------------------------------------------------

TEST_CASE("cuda: the device-side generator is ops.h's mix64 and uniform01") {
  std::int64_t mismatches = 0;
  for (const std::uint64_t seed : {0ULL, 1ULL, 42ULL, 0xDEADBEEFULL, 0xFFFFFFFFFFFFFFFFULL}) {
    for (std::uint64_t i = 0; i < 100000; ++i) {
      if (generator::mix64(seed + i) != mix64(seed + i)) ++mismatches;
      const float device_copy = generator::uniform01(seed, i), reference = uniform01(seed, i);
      if (std::memcmp(&device_copy, &reference, sizeof(float)) != 0) ++mismatches;
    }
    const std::uint64_t far = 0xFFFFFFFFFFFFFF00ULL;
    if (generator::uniform01(seed, far) != uniform01(seed, far)) ++mismatches;
  }
  CHECK(mismatches == 0);
}

TEST_CASE("cuda: device kind, name, free memory and aligned allocations") {
  CHECK(cuda_compiled());
  CHECK(cuda_available());
  auto device = make_cuda_device(0);
  CHECK(device->kind() == DeviceKind::kCuda);
  CHECK(!device->name().empty());
  MESSAGE("device 0: ", device->name(), ", ", device->free_memory(), " bytes free");
  CHECK(device->free_memory() > 0);
  for (const Bytes bytes : {Bytes{0}, Bytes{1}, Bytes{1000}, Bytes{1} << 20}) {
    void* p = device->allocate(bytes);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 256 == 0);
    device->deallocate(p);
  }
  device->deallocate(nullptr);
}

TEST_CASE("cuda: a device ordinal that does not exist is refused") {
  CHECK_THROWS_WITH_AS(make_cuda_device(-1), doctest::Contains("no CUDA device -1"), DeviceError);
  CHECK_THROWS_WITH_AS(make_cuda_device(4096), doctest::Contains("no CUDA device 4096"), DeviceError);
}

TEST_CASE("cuda: a failed allocation names the call and the device, and the device stays usable") {
  auto device = make_cuda_device(0);
  std::string message;
  try {
    device->allocate(Bytes{1} << 50);  // 1 PiB
  } catch (const DeviceError& e) {
    message = e.what();
  }
  INFO(message);
  CHECK(message.find("cudaMalloc(1125899906842624 bytes) failed: ") != std::string::npos);
  CHECK(message.find(" on cuda:0 (" + device->name() + ") at ") != std::string::npos);
  CHECK(message.find("cuda_device.cu:") != std::string::npos);

  // The failure was cleared: the next launch check does not report it again.
  auto ops = device->create_ops();
  float* x = static_cast<float*>(device->allocate(16 * sizeof(float)));
  ops->fill(16, x, 2.5f);
  std::vector<float> host(16);
  ops->to_host(x, host.data(), 16 * sizeof(float));
  ops->synchronize();
  CHECK(host == std::vector<float>(16, 2.5f));
  device->deallocate(x);
}

TEST_CASE("cuda: transfers round-trip and synchronize returns") {
  Twin twin;
  const std::vector<float> values = random_values(1000, -5, 5, 1);
  const Mirror<float> m = twin.upload(values);
  CHECK(twin.gpu_values(m) == values);
  twin.gpu().to_host(m.gpu, nullptr, 0);
  twin.gpu().to_device(nullptr, m.gpu, 0);
  twin.gpu().synchronize();
}

TEST_CASE("cuda: contexts work from several threads at once") {
  auto device = make_cuda_device(0);
  constexpr int kThreads = 4;
  constexpr std::int64_t kCount = 1 << 16;
  std::vector<std::vector<float>> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        auto ops = device->create_ops();
        float* x = static_cast<float*>(device->allocate(kCount * sizeof(float)));
        for (int round = 0; round < 20; ++round) ops->fill_uniform(kCount, x, -1.0f, 1.0f, 100 + t);
        results[static_cast<std::size_t>(t)].resize(kCount);
        ops->to_host(x, results[static_cast<std::size_t>(t)].data(), kCount * sizeof(float));
        device->deallocate(x);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(t)] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread ", t, ": ", errors[static_cast<std::size_t>(t)]);
    CHECK(errors[static_cast<std::size_t>(t)].empty());
    const auto& got = results[static_cast<std::size_t>(t)];
    REQUIRE(got.size() == static_cast<std::size_t>(kCount));
    CHECK(got[12345] == uniform01(100 + static_cast<std::uint64_t>(t), 12345) * 2.0f - 1.0f);
  }
}

// --- Synthetic data -----------------------------------------------------------------------

TEST_CASE("cuda: fill_uniform is bit-identical to the CPU") {
  Twin twin;
  struct Case {
    float lo, hi;
    std::uint64_t seed;
  };
  // The last range is one float wide: most sums round up to hi and must be moved below it.
  for (const Case& c : {Case{-1.0f, 1.0f, 42}, Case{-3.5f, 7.25f, 0xFFFFFFFFFFFFFFFFULL}, Case{0.0f, 1.0f, 0},
                        Case{1.0f, std::nextafter(1.0f, 2.0f), 7}}) {
    const Mirror<float> x = twin.output(10007);
    twin.cpu().fill_uniform(x.count, x.cpu, c.lo, c.hi, c.seed);
    twin.gpu().fill_uniform(x.count, x.gpu, c.lo, c.hi, c.seed);
    twin.check_identical(x, "fill_uniform [" + std::to_string(c.lo) + ", " + std::to_string(c.hi) + ") seed " +
                                std::to_string(c.seed));
  }
}

TEST_CASE("cuda: fill_labels is identical to the CPU") {
  Twin twin;
  for (const int classes : {1, 7, 10, 1000, 1 << 24}) {
    const Mirror<std::int32_t> labels = twin.upload(std::vector<std::int32_t>(4099, -1));
    twin.cpu().fill_labels(4099, labels.cpu, classes, 99);
    twin.gpu().fill_labels(4099, labels.gpu, classes, 99);
    twin.check_identical(labels, "fill_labels classes=" + std::to_string(classes));
  }
}

// --- Element-wise -------------------------------------------------------------------------

TEST_CASE("cuda: relu, add, accumulate and fill match the CPU exactly") {
  Twin twin;
  constexpr std::int64_t n = 100003;
  const Mirror<float> x = twin.upload(random_values(n, -1, 1, 2));
  const Mirror<float> b = twin.upload(random_values(n, -1, 1, 3));
  const Mirror<float> dy = twin.upload(random_values(n, -1, 1, 4));

  const Mirror<float> y = twin.output(n);
  twin.cpu().relu_forward(n, x.cpu, y.cpu);
  twin.gpu().relu_forward(n, x.gpu, y.gpu);
  twin.check_identical(y, "relu_forward");

  const Mirror<float> dx = twin.output(n);
  twin.cpu().relu_backward(n, y.cpu, dy.cpu, dx.cpu);
  twin.gpu().relu_backward(n, y.gpu, dy.gpu, dx.gpu);
  twin.check_identical(dx, "relu_backward");

  const Mirror<float> sum = twin.output(n);
  twin.cpu().add(n, x.cpu, b.cpu, sum.cpu);
  twin.gpu().add(n, x.gpu, b.gpu, sum.gpu);
  twin.check_identical(sum, "add");

  twin.cpu().accumulate(n, dy.cpu, sum.cpu);
  twin.gpu().accumulate(n, dy.gpu, sum.gpu);
  twin.check_identical(sum, "accumulate");

  // In place, as a residual block may call them.
  const Mirror<float> z = twin.upload(random_values(n, -1, 1, 5));
  twin.cpu().relu_forward(n, z.cpu, z.cpu);
  twin.gpu().relu_forward(n, z.gpu, z.gpu);
  twin.cpu().add(n, z.cpu, b.cpu, z.cpu);
  twin.gpu().add(n, z.gpu, b.gpu, z.gpu);
  twin.check_identical(z, "relu_forward then add in place");

  twin.cpu().fill(n, y.cpu, -0.75f);
  twin.gpu().fill(n, y.gpu, -0.75f);
  twin.check_identical(y, "fill");
}

TEST_CASE("cuda: element-wise kernels cover more elements than one grid") {
  Twin twin;
  // More than 65535 blocks of 256 threads: the grid-stride loops go round twice.
  constexpr std::int64_t n = std::int64_t{65535} * 256 * 2 + 3;
  const Mirror<float> x = twin.output(n);
  twin.cpu().fill_uniform(n, x.cpu, -1.0f, 1.0f, 5);
  twin.gpu().fill_uniform(n, x.gpu, -1.0f, 1.0f, 5);
  const Mirror<float> y = twin.output(n);
  twin.cpu().fill(n, y.cpu, 0.5f);
  twin.gpu().fill(n, y.gpu, 0.5f);
  twin.cpu().accumulate(n, x.cpu, y.cpu);
  twin.gpu().accumulate(n, x.gpu, y.gpu);
  twin.check_identical(y, "fill_uniform, fill and accumulate over 33 million elements");
}

TEST_CASE("cuda: copy_channels copies and accumulates channel ranges like the CPU") {
  Twin twin;
  const int n = 3, hw = 5 * 4, src_c = 6, dst_c = 9;
  const Mirror<float> src = twin.upload(random_values(std::int64_t{n} * src_c * hw, -1, 1, 6));
  // dst starts with values: only channels [4, 7) of each sample are written.
  const Mirror<float> dst = twin.upload(random_values(std::int64_t{n} * dst_c * hw, -1, 1, 7));
  twin.cpu().copy_channels(n, hw, src.cpu, src_c, 2, dst.cpu, dst_c, 4, 3, false);
  twin.gpu().copy_channels(n, hw, src.gpu, src_c, 2, dst.gpu, dst_c, 4, 3, false);
  twin.check_identical(dst, "copy_channels copy");
  twin.cpu().copy_channels(n, hw, src.cpu, src_c, 0, dst.cpu, dst_c, 1, 6, true);
  twin.gpu().copy_channels(n, hw, src.gpu, src_c, 0, dst.gpu, dst_c, 1, 6, true);
  twin.check_identical(dst, "copy_channels accumulate");
}

// --- Convolution --------------------------------------------------------------------------

ConvShape conv_shape(int n, int c, int h, int w, int k, int r, int s, int pad_h, int pad_w, int stride_h,
                     int stride_w) {
  ConvShape cs;
  cs.n = n;
  cs.c = c;
  cs.h = h;
  cs.w = w;
  cs.k = k;
  cs.r = r;
  cs.s = s;
  cs.pad_h = pad_h;
  cs.pad_w = pad_w;
  cs.stride_h = stride_h;
  cs.stride_w = stride_w;
  return cs;
}

TEST_CASE("cuda: convolution forward, backward data and backward filter match the CPU") {
  const std::vector<ConvShape> shapes{
      conv_shape(2, 3, 9, 7, 4, 3, 3, 1, 1, 2, 2),     // stride 2 with padding, odd sizes
      conv_shape(3, 5, 8, 8, 6, 1, 1, 0, 0, 1, 1),     // pointwise
      conv_shape(2, 4, 11, 10, 5, 5, 3, 2, 1, 1, 2),   // rectangular filter, mixed stride
      conv_shape(2, 16, 14, 14, 32, 3, 3, 1, 1, 1, 1), // a ResNet-like 3x3
      conv_shape(2, 3, 20, 20, 8, 7, 7, 3, 3, 2, 2),   // the ResNet stem
      conv_shape(4, 8, 8, 8, 16, 1, 1, 0, 0, 2, 2),    // a strided 1x1 projection
  };
  unsigned seed = 10;
  for (const ConvShape& cs : shapes) {
    const std::string what = describe(cs);
    INFO(what);
    Twin twin;
    const std::int64_t xs = std::int64_t{cs.n} * cs.c * cs.h * cs.w;
    const std::int64_t ws = std::int64_t{cs.k} * cs.c * cs.r * cs.s;
    const std::int64_t ys = std::int64_t{cs.n} * cs.k * cs.out_h() * cs.out_w();
    const Mirror<float> x = twin.upload(random_values(xs, -1, 1, ++seed));
    const Mirror<float> w = twin.upload(random_values(ws, -0.5f, 0.5f, ++seed));
    const Mirror<float> bias = twin.upload(random_values(cs.k, -1, 1, ++seed));
    const Mirror<float> dy = twin.upload(random_values(ys, -1, 1, ++seed));

    const Bytes cpu_ws = twin.cpu().conv_workspace_bytes(cs);
    const Bytes gpu_ws = twin.gpu().conv_workspace_bytes(cs);
    CHECK(gpu_ws >= 0);
    MESSAGE(what, ": cuDNN workspace ", gpu_ws, " bytes");
    const auto [cpu_work, gpu_work] = twin.workspace(cpu_ws, gpu_ws);

    const Mirror<float> y = twin.output(ys);
    twin.cpu().conv_forward(cs, x.cpu, w.cpu, bias.cpu, y.cpu, cpu_work, cpu_ws);
    twin.gpu().conv_forward(cs, x.gpu, w.gpu, bias.gpu, y.gpu, gpu_work, gpu_ws);
    twin.check_close(y, 1e-3, what + " forward with bias");

    const Mirror<float> y_nobias = twin.output(ys);
    twin.cpu().conv_forward(cs, x.cpu, w.cpu, nullptr, y_nobias.cpu, cpu_work, cpu_ws);
    twin.gpu().conv_forward(cs, x.gpu, w.gpu, nullptr, y_nobias.gpu, gpu_work, gpu_ws);
    twin.check_close(y_nobias, 1e-3, what + " forward without bias");

    const Mirror<float> dx = twin.output(xs);
    twin.cpu().conv_backward_data(cs, w.cpu, dy.cpu, dx.cpu, cpu_work, cpu_ws);
    twin.gpu().conv_backward_data(cs, w.gpu, dy.gpu, dx.gpu, gpu_work, gpu_ws);
    twin.check_close(dx, 1e-3, what + " backward data");

    const Mirror<float> dw = twin.output(ws);
    const Mirror<float> dbias = twin.output(cs.k);
    twin.cpu().conv_backward_filter(cs, x.cpu, dy.cpu, dw.cpu, dbias.cpu, cpu_work, cpu_ws);
    twin.gpu().conv_backward_filter(cs, x.gpu, dy.gpu, dw.gpu, dbias.gpu, gpu_work, gpu_ws);
    twin.check_close(dw, 2e-3, what + " backward filter");
    twin.check_close(dbias, 2e-3, what + " backward bias");

    const Mirror<float> dw_only = twin.output(ws);
    twin.cpu().conv_backward_filter(cs, x.cpu, dy.cpu, dw_only.cpu, nullptr, cpu_work, cpu_ws);
    twin.gpu().conv_backward_filter(cs, x.gpu, dy.gpu, dw_only.gpu, nullptr, gpu_work, gpu_ws);
    twin.check_close(dw_only, 2e-3, what + " backward filter without bias");
  }
}

TEST_CASE("cuda: a convolution given less workspace than its algorithm needs is refused") {
  Twin twin;
  const ConvShape cs = conv_shape(8, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1);
  const Bytes need = twin.gpu().conv_workspace_bytes(cs);
  if (need == 0) {
    MESSAGE("cuDNN chose algorithms without workspace for ", describe(cs), ": nothing to refuse");
    return;
  }
  const Mirror<float> x = twin.upload(random_values(std::int64_t{cs.n} * cs.c * cs.h * cs.w, -1, 1, 30));
  const Mirror<float> w = twin.upload(random_values(std::int64_t{cs.k} * cs.c * cs.r * cs.s, -1, 1, 31));
  const Mirror<float> y = twin.output(std::int64_t{cs.n} * cs.k * cs.out_h() * cs.out_w());
  const Mirror<float> dx = twin.output(x.count);
  const Mirror<float> dw = twin.output(w.count);
  // At least one of the three calls needs the workspace conv_workspace_bytes reported.
  int refused = 0;
  const auto attempt = [&](auto&& call) {
    try {
      call();
    } catch (const DeviceError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find("needs a workspace of") != std::string::npos);
      ++refused;
    }
  };
  attempt([&] { twin.gpu().conv_forward(cs, x.gpu, w.gpu, nullptr, y.gpu, nullptr, 0); });
  attempt([&] { twin.gpu().conv_backward_data(cs, w.gpu, y.gpu, dx.gpu, nullptr, 0); });
  attempt([&] { twin.gpu().conv_backward_filter(cs, x.gpu, y.gpu, dw.gpu, nullptr, nullptr, 0); });
  CHECK(refused >= 1);
  twin.gpu().synchronize();
}

// --- Batch normalisation ------------------------------------------------------------------

TEST_CASE("cuda: batchnorm training, inference and backward match the CPU") {
  Twin twin;
  const int n = 4, c = 3, h = 5, w = 6;
  const std::int64_t count = std::int64_t{n} * c * h * w;
  const double momentum = 0.1, eps = 1e-5;
  std::vector<float> xv = random_values(count, -2, 3, 40);
  for (std::int64_t i = 0; i < count; ++i) xv[static_cast<std::size_t>(i)] += static_cast<float>((i / (h * w)) % c);
  const Mirror<float> x = twin.upload(xv);
  const Mirror<float> gamma = twin.upload(random_values(c, 0.5f, 1.5f, 41));
  const Mirror<float> beta = twin.upload(random_values(c, -0.5f, 0.5f, 42));
  const Mirror<float> running_mean = twin.upload(random_values(c, -1, 1, 43));
  const Mirror<float> running_var = twin.upload(random_values(c, 0.5f, 2, 44));
  const Mirror<float> y = twin.output(count);
  const Mirror<float> save_mean = twin.output(c);
  const Mirror<float> save_invstd = twin.output(c);

  twin.cpu().batchnorm_forward_train(n, c, h, w, x.cpu, gamma.cpu, beta.cpu, y.cpu, running_mean.cpu,
                                     running_var.cpu, save_mean.cpu, save_invstd.cpu, momentum, eps);
  twin.gpu().batchnorm_forward_train(n, c, h, w, x.gpu, gamma.gpu, beta.gpu, y.gpu, running_mean.gpu,
                                     running_var.gpu, save_mean.gpu, save_invstd.gpu, momentum, eps);
  twin.check_close(y, 1e-4, "batchnorm train y");
  twin.check_close(running_mean, 1e-4, "batchnorm running mean");
  twin.check_close(running_var, 1e-4, "batchnorm running variance (unbiased batch variance)");
  twin.check_close(save_mean, 1e-4, "batchnorm saved mean");
  twin.check_close(save_invstd, 1e-4, "batchnorm saved 1/sqrt(var + eps)");

  const Mirror<float> y_infer = twin.output(count);
  // Both devices normalise with the CPU's running statistics.
  const Mirror<float> stats_mean = twin.upload(twin.cpu_values(running_mean));
  const Mirror<float> stats_var = twin.upload(twin.cpu_values(running_var));
  twin.cpu().batchnorm_forward_infer(n, c, h, w, x.cpu, gamma.cpu, beta.cpu, stats_mean.cpu, stats_var.cpu,
                                     y_infer.cpu, eps);
  twin.gpu().batchnorm_forward_infer(n, c, h, w, x.gpu, gamma.gpu, beta.gpu, stats_mean.gpu, stats_var.gpu,
                                     y_infer.gpu, eps);
  twin.check_close(y_infer, 1e-4, "batchnorm inference y");

  // Backward from the CPU's saved statistics on both devices.
  const Mirror<float> mean = twin.upload(twin.cpu_values(save_mean));
  const Mirror<float> invstd = twin.upload(twin.cpu_values(save_invstd));
  const Mirror<float> dy = twin.upload(random_values(count, -1, 1, 45));
  const Mirror<float> dx = twin.output(count);
  const Mirror<float> dgamma = twin.output(c);
  const Mirror<float> dbeta = twin.output(c);
  twin.cpu().batchnorm_backward(n, c, h, w, x.cpu, dy.cpu, gamma.cpu, mean.cpu, invstd.cpu, dx.cpu, dgamma.cpu,
                                dbeta.cpu, eps);
  twin.gpu().batchnorm_backward(n, c, h, w, x.gpu, dy.gpu, gamma.gpu, mean.gpu, invstd.gpu, dx.gpu, dgamma.gpu,
                                dbeta.gpu, eps);
  twin.check_close(dx, 1e-3, "batchnorm backward dx");
  twin.check_close(dgamma, 1e-3, "batchnorm backward dgamma");
  twin.check_close(dbeta, 1e-3, "batchnorm backward dbeta");
}

// --- Pooling ------------------------------------------------------------------------------

PoolShape pool_shape(PoolMode mode, int n, int c, int h, int w, int window, int stride, int pad) {
  PoolShape ps;
  ps.mode = mode;
  ps.n = n;
  ps.c = c;
  ps.h = h;
  ps.w = w;
  ps.window_h = ps.window_w = window;
  ps.stride_h = ps.stride_w = stride;
  ps.pad_h = ps.pad_w = pad;
  return ps;
}

TEST_CASE("cuda: max and average pooling forward and backward match the CPU") {
  const std::vector<PoolShape> shapes{
      pool_shape(PoolMode::kMax, 2, 3, 8, 8, 2, 2, 0),
      pool_shape(PoolMode::kMax, 2, 3, 9, 9, 3, 2, 1),  // overlapping windows with padding (ResNet)
      pool_shape(PoolMode::kMax, 1, 2, 7, 7, 2, 2, 0),  // the last row and column are in no window
      pool_shape(PoolMode::kMax, 1, 2, 5, 5, 2, 1, 2),  // windows made only of padding give 0
      pool_shape(PoolMode::kAverage, 2, 3, 8, 8, 2, 2, 0),
      pool_shape(PoolMode::kAverage, 2, 3, 9, 9, 3, 2, 1),
      pool_shape(PoolMode::kAverage, 1, 2, 7, 7, 7, 1, 0),  // global average pooling
  };
  unsigned seed = 50;
  for (const PoolShape& ps : shapes) {
    // Continuous inputs, then inputs with many ties (four levels): max pooling must route each
    // window's gradient to its first maximum in row-major order, as the CPU does.
    for (const bool ties : {false, true}) {
      const std::string what = describe(ps) + (ties ? " with ties" : "");
      INFO(what);
      Twin twin;
      const std::int64_t xs = std::int64_t{ps.n} * ps.c * ps.h * ps.w;
      const std::int64_t ys = std::int64_t{ps.n} * ps.c * ps.out_h() * ps.out_w();
      std::vector<float> xv = random_values(xs, -1, 1, ++seed);
      if (ties) {
        for (float& v : xv) v = std::floor(v * 2.0f);
      }
      const Mirror<float> x = twin.upload(xv);
      const Mirror<float> y = twin.output(ys);
      twin.cpu().pool_forward(ps, x.cpu, y.cpu);
      twin.gpu().pool_forward(ps, x.gpu, y.gpu);
      if (ps.mode == PoolMode::kMax) {
        twin.check_identical(y, what + " forward");
      } else {
        twin.check_close(y, 1e-5, what + " forward");
      }

      const Mirror<float> dy = twin.upload(random_values(ys, -1, 1, ++seed));
      const Mirror<float> dx = twin.output(xs);
      twin.cpu().pool_backward(ps, x.cpu, y.cpu, dy.cpu, dx.cpu);
      twin.gpu().pool_backward(ps, x.gpu, y.gpu, dy.gpu, dx.gpu);
      if (ps.mode == PoolMode::kMax) {
        twin.check_identical(dx, what + " backward");
      } else {
        twin.check_close(dx, 1e-5, what + " backward");
      }
    }
  }
}

// --- Fully connected ----------------------------------------------------------------------

TEST_CASE("cuda: fully connected forward and backward match the CPU") {
  Twin twin;
  const int n = 5, in = 37, out = 11;
  const Mirror<float> x = twin.upload(random_values(std::int64_t{n} * in, -1, 1, 60));
  const Mirror<float> w = twin.upload(random_values(std::int64_t{out} * in, -0.5f, 0.5f, 61));
  const Mirror<float> b = twin.upload(random_values(out, -1, 1, 62));
  const Mirror<float> dy = twin.upload(random_values(std::int64_t{n} * out, -1, 1, 63));

  const Mirror<float> y = twin.output(std::int64_t{n} * out);
  twin.cpu().fc_forward(n, in, out, x.cpu, w.cpu, b.cpu, y.cpu);
  twin.gpu().fc_forward(n, in, out, x.gpu, w.gpu, b.gpu, y.gpu);
  twin.check_close(y, 1e-4, "fc forward with bias");

  const Mirror<float> y_nobias = twin.output(std::int64_t{n} * out);
  twin.cpu().fc_forward(n, in, out, x.cpu, w.cpu, nullptr, y_nobias.cpu);
  twin.gpu().fc_forward(n, in, out, x.gpu, w.gpu, nullptr, y_nobias.gpu);
  twin.check_close(y_nobias, 1e-4, "fc forward without bias");

  const Mirror<float> dx = twin.output(std::int64_t{n} * in);
  const Mirror<float> dw = twin.output(std::int64_t{out} * in);
  const Mirror<float> db = twin.output(out);
  twin.cpu().fc_backward(n, in, out, x.cpu, w.cpu, dy.cpu, dx.cpu, dw.cpu, db.cpu);
  twin.gpu().fc_backward(n, in, out, x.gpu, w.gpu, dy.gpu, dx.gpu, dw.gpu, db.gpu);
  twin.check_close(dx, 1e-4, "fc backward dx");
  twin.check_close(dw, 1e-4, "fc backward dw");
  twin.check_close(db, 1e-4, "fc backward db");

  // The first layer skips dx (and here db): those buffers stay untouched.
  const Mirror<float> dx_skipped = twin.upload(std::vector<float>(static_cast<std::size_t>(n * in), 3.0f));
  const Mirror<float> dw2 = twin.output(std::int64_t{out} * in);
  twin.cpu().fc_backward(n, in, out, x.cpu, w.cpu, dy.cpu, nullptr, dw2.cpu, nullptr);
  twin.gpu().fc_backward(n, in, out, x.gpu, w.gpu, dy.gpu, nullptr, dw2.gpu, nullptr);
  twin.check_close(dw2, 1e-4, "fc backward dw without dx and db");
  twin.check_identical(dx_skipped, "fc backward leaves dx alone when it is null");
}

TEST_CASE("cuda: a larger fully connected layer (batch 64, 512 -> 1000) matches the CPU") {
  Twin twin;
  const int n = 64, in = 512, out = 1000;
  const Mirror<float> x = twin.upload(random_values(std::int64_t{n} * in, -1, 1, 64));
  const Mirror<float> w = twin.upload(random_values(std::int64_t{out} * in, -0.1f, 0.1f, 65));
  const Mirror<float> b = twin.upload(random_values(out, -1, 1, 66));
  const Mirror<float> dy = twin.upload(random_values(std::int64_t{n} * out, -1, 1, 67));
  const Mirror<float> y = twin.output(std::int64_t{n} * out);
  twin.cpu().fc_forward(n, in, out, x.cpu, w.cpu, b.cpu, y.cpu);
  twin.gpu().fc_forward(n, in, out, x.gpu, w.gpu, b.gpu, y.gpu);
  twin.check_close(y, 1e-4, "fc forward");
  const Mirror<float> dx = twin.output(std::int64_t{n} * in);
  const Mirror<float> dw = twin.output(std::int64_t{out} * in);
  const Mirror<float> db = twin.output(out);
  twin.cpu().fc_backward(n, in, out, x.cpu, w.cpu, dy.cpu, dx.cpu, dw.cpu, db.cpu);
  twin.gpu().fc_backward(n, in, out, x.gpu, w.gpu, dy.gpu, dx.gpu, dw.gpu, db.gpu);
  twin.check_close(dx, 1e-4, "fc backward dx");
  twin.check_close(dw, 1e-4, "fc backward dw");
  twin.check_close(db, 1e-4, "fc backward db");
}

// --- Loss ---------------------------------------------------------------------------------

TEST_CASE("cuda: softmax cross-entropy forward and backward match the CPU") {
  struct Case {
    int n, classes;
    float scale;
  };
  unsigned seed = 70;
  // 300 rows: more than the loss kernel's 256 threads. Scale 60: probabilities underflow to 0.
  for (const Case& c : {Case{7, 13, 3.0f}, Case{300, 1000, 5.0f}, Case{32, 10, 60.0f}, Case{5, 1, 1.0f}}) {
    const std::string what = "softmax_xent n=" + std::to_string(c.n) + " classes=" + std::to_string(c.classes) +
                             " scale=" + std::to_string(c.scale);
    INFO(what);
    Twin twin;
    const std::int64_t count = std::int64_t{c.n} * c.classes;
    std::vector<float> logits_v = random_values(count, -c.scale, c.scale, ++seed);
    logits_v[0] += 1000.0f;  // one very large logit: the max shift must keep exp finite
    const Mirror<float> logits = twin.upload(logits_v);
    const Mirror<std::int32_t> labels = twin.upload(random_labels(c.n, c.classes, ++seed));
    const Mirror<float> probs = twin.output(count);
    const Mirror<float> loss = twin.output(1);
    twin.cpu().softmax_xent_forward(c.n, c.classes, logits.cpu, labels.cpu, probs.cpu, loss.cpu);
    twin.gpu().softmax_xent_forward(c.n, c.classes, logits.gpu, labels.gpu, probs.gpu, loss.gpu);
    twin.check_close(probs, 1e-5, what + " probabilities");
    twin.check_close(loss, 1e-5, what + " loss");

    const Mirror<float> dlogits = twin.output(count);
    twin.cpu().softmax_xent_backward(c.n, c.classes, probs.cpu, labels.cpu, dlogits.cpu);
    twin.gpu().softmax_xent_backward(c.n, c.classes, probs.gpu, labels.gpu, dlogits.gpu);
    twin.check_close(dlogits, 1e-5, what + " dlogits");

    // In place on the GPU (probs written over the logits): the same loss and probabilities.
    const Mirror<float> inplace = twin.upload(logits_v);
    const Mirror<float> loss2 = twin.output(1);
    twin.gpu().softmax_xent_forward(c.n, c.classes, inplace.gpu, labels.gpu, inplace.gpu, loss2.gpu);
    salus::gpu::check_identical(twin.gpu_values(inplace), twin.gpu_values(probs), what + " in place, probabilities");
    salus::gpu::check_identical(twin.gpu_values(loss2), twin.gpu_values(loss), what + " in place, loss");
  }
}

// --- Optimiser ----------------------------------------------------------------------------

TEST_CASE("cuda: sgd_momentum matches the CPU over three steps") {
  Twin twin;
  constexpr std::int64_t n = 10001;
  const Mirror<float> w = twin.upload(random_values(n, -1, 1, 80));
  const Mirror<float> v = twin.upload(random_values(n, -0.1f, 0.1f, 81));
  for (unsigned step = 0; step < 3; ++step) {
    const Mirror<float> dw = twin.upload(random_values(n, -1, 1, 82 + step));
    twin.cpu().sgd_momentum(n, w.cpu, dw.cpu, v.cpu, 0.1f, 0.9f, 1e-4f);
    twin.gpu().sgd_momentum(n, w.gpu, dw.gpu, v.gpu, 0.1f, 0.9f, 1e-4f);
  }
  // Rounded step by step like the CPU: expected identical; the tolerance only allows for a host
  // compiler that contracts the CPU's expression into FMAs.
  twin.check_close(w, 1e-6, "sgd weights");
  twin.check_close(v, 1e-6, "sgd velocity");
}

}  // namespace
}  // namespace salus::gpu
