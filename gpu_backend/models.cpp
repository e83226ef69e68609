// Model builders for the real backend, by workload name "<model>_<batch>". Shapes follow the
// published architectures (ImageNet 224x224 inputs unless stated; no dropout, which changes no
// memory class and no kernel the paper's jobs depend on).
#include <cctype>
#include <functional>
#include <map>

#include "core/errors.h"
#include "gpu_backend/model.h"

namespace salus::gpu {
namespace {

using Builder = std::function<void(Network&)>;

void lenet(Network& n) {  // LeNet-5 on 28x28 grey images
  int x = n.input(1, 28, 28);
  x = n.maxpool(n.relu(n.conv(x, 6, 5, 1, 2)), 2, 2);
  x = n.maxpool(n.relu(n.conv(x, 16, 5)), 2, 2);
  x = n.relu(n.fc(x, 120));
  x = n.relu(n.fc(x, 84));
  n.set_loss(n.fc(x, 10), 10);
}

void mlp(Network& n) {  // three fully connected layers on 28x28 images
  int x = n.input(1, 28, 28);
  x = n.relu(n.fc(x, 512));
  x = n.relu(n.fc(x, 256));
  n.set_loss(n.fc(x, 10), 10);
}

void classifier(Network& n, int x, int hidden) {
  x = n.relu(n.fc(x, hidden));
  x = n.relu(n.fc(x, hidden));
  n.set_loss(n.fc(x, 1000), 1000);
}

void alexnet(Network& n) {  // the one-GPU variant (64-192-384-256-256)
  int x = n.input(3, 224, 224);
  x = n.maxpool(n.relu(n.conv(x, 64, 11, 4, 2)), 3, 2);
  x = n.maxpool(n.relu(n.conv(x, 192, 5, 1, 2)), 3, 2);
  x = n.relu(n.conv(x, 384, 3, 1, 1));
  x = n.relu(n.conv(x, 256, 3, 1, 1));
  x = n.maxpool(n.relu(n.conv(x, 256, 3, 1, 1)), 3, 2);
  classifier(n, x, 4096);
}

void overfeat(Network& n) {  // OverFeat "fast" on 231x231 inputs
  int x = n.input(3, 231, 231);
  x = n.maxpool(n.relu(n.conv(x, 96, 11, 4, 0)), 2, 2);
  x = n.maxpool(n.relu(n.conv(x, 256, 5, 1, 0)), 2, 2);
  x = n.relu(n.conv(x, 512, 3, 1, 1));
  x = n.relu(n.conv(x, 1024, 3, 1, 1));
  x = n.maxpool(n.relu(n.conv(x, 1024, 3, 1, 1)), 2, 2);
  x = n.relu(n.fc(x, 3072));
  x = n.relu(n.fc(x, 4096));
  n.set_loss(n.fc(x, 1000), 1000);
}

Builder vgg(std::vector<int> convs_per_stage) {
  return [convs_per_stage](Network& n) {
    static constexpr int kWidth[] = {64, 128, 256, 512, 512};
    int x = n.input(3, 224, 224);
    for (std::size_t s = 0; s < convs_per_stage.size(); ++s) {
      for (int i = 0; i < convs_per_stage[s]; ++i) x = n.relu(n.conv(x, kWidth[s], 3, 1, 1));
      x = n.maxpool(x, 2, 2);
    }
    classifier(n, x, 4096);
  };
}

Builder resnet(std::vector<int> blocks_per_stage) {
  return [blocks_per_stage](Network& n) {
    int x = n.input(3, 224, 224);
    x = n.maxpool(n.conv_bn_relu(x, 64, 7, 2, 3), 3, 2, 1);
    int width = 64;
    for (std::size_t s = 0; s < blocks_per_stage.size(); ++s, width *= 2) {
      for (int b = 0; b < blocks_per_stage[s]; ++b) {
        const int stride = (b == 0 && s > 0) ? 2 : 1;
        // Bottleneck: 1x1 reduce, 3x3, 1x1 expand (x4), projection shortcut on the first block.
        int y = n.conv_bn_relu(x, width, 1, 1, 0);
        y = n.conv_bn_relu(y, width, 3, stride, 1);
        y = n.batchnorm(n.conv(y, width * 4, 1, 1, 0), /*zero_gamma=*/true);
        const int shortcut = b == 0 ? n.batchnorm(n.conv(x, width * 4, 1, stride, 0)) : x;
        x = n.relu(n.add(y, shortcut));
      }
    }
    x = n.avgpool(x, 7, 1);
    n.set_loss(n.fc(x, 1000), 1000);
  };
}

void googlenet(Network& n) {  // Inception v1 (without the auxiliary classifiers)
  auto inception = [&n](int x, int c1, int c3r, int c3, int c5r, int c5, int pool_proj) {
    const int b1 = n.relu(n.conv(x, c1, 1));
    const int b2 = n.relu(n.conv(n.relu(n.conv(x, c3r, 1)), c3, 3, 1, 1));
    const int b3 = n.relu(n.conv(n.relu(n.conv(x, c5r, 1)), c5, 5, 1, 2));
    const int b4 = n.relu(n.conv(n.maxpool(x, 3, 1, 1), pool_proj, 1));
    return n.concat({b1, b2, b3, b4});
  };
  int x = n.input(3, 224, 224);
  x = n.maxpool(n.relu(n.conv(x, 64, 7, 2, 3)), 3, 2, 1);
  x = n.relu(n.conv(x, 64, 1));
  x = n.maxpool(n.relu(n.conv(x, 192, 3, 1, 1)), 3, 2, 1);
  x = inception(x, 64, 96, 128, 16, 32, 32);
  x = inception(x, 128, 128, 192, 32, 96, 64);
  x = n.maxpool(x, 3, 2, 1);
  x = inception(x, 192, 96, 208, 16, 48, 64);
  x = inception(x, 160, 112, 224, 24, 64, 64);
  x = inception(x, 128, 128, 256, 24, 64, 64);
  x = inception(x, 112, 144, 288, 32, 64, 64);
  x = inception(x, 256, 160, 320, 32, 128, 128);
  x = n.maxpool(x, 3, 2, 1);
  x = inception(x, 256, 160, 320, 32, 128, 128);
  x = inception(x, 384, 192, 384, 48, 128, 128);
  x = n.avgpool(x, 7, 1);
  n.set_loss(n.fc(x, 1000), 1000);
}

const std::map<std::string, Builder>& builders() {
  static const std::map<std::string, Builder> kBuilders = {
      {"lenet", lenet},
      {"mlp", mlp},
      {"alexnet", alexnet},
      {"overfeat", overfeat},
      {"vgg11", vgg({1, 1, 2, 2, 2})},
      {"vgg16", vgg({2, 2, 3, 3, 3})},
      {"vgg19", vgg({2, 2, 4, 4, 4})},
      {"resnet50", resnet({3, 4, 6, 3})},
      {"resnet101", resnet({3, 4, 23, 3})},
      {"resnet152", resnet({3, 8, 36, 3})},
      {"googlenet", googlenet},
  };
  return kBuilders;
}

std::string joined_names() {
  std::string s;
  for (const auto& [name, b] : builders()) s += (s.empty() ? "" : ", ") + name;
  return s;
}

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> v;
  for (const auto& [name, b] : builders()) v.push_back(name);
  return v;
}

namespace {
bool split(const std::string& workload, std::string* model, int* batch) {
  const auto us = workload.rfind('_');
  if (us == std::string::npos || us + 1 >= workload.size()) return false;
  const std::string digits = workload.substr(us + 1);
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  if (digits.size() > 6) return false;
  *model = workload.substr(0, us);
  *batch = std::stoi(digits);
  return *batch > 0 && builders().count(*model) > 0;
}
}  // namespace

bool is_model(const std::string& workload) {
  std::string model;
  int batch = 0;
  return split(workload, &model, &batch);
}

std::optional<RealWorkload> parse_real_workload(const std::string& workload) {
  static constexpr char kSuffix[] = "_infer";
  constexpr std::size_t k = sizeof(kSuffix) - 1;
  RealWorkload w{workload, false};
  if (workload.size() > k && workload.compare(workload.size() - k, k, kSuffix) == 0) {
    w.model.resize(workload.size() - k);
    w.inference = true;
  }
  if (!is_model(w.model)) return std::nullopt;
  return w;
}

std::string real_workload_help() { return "<model>_<batch>[_infer] with model one of " + joined_names(); }

std::unique_ptr<Network> build_model(const std::string& workload) {
  std::string model;
  int batch = 0;
  if (!split(workload, &model, &batch)) {
    throw core::InputError("no real model for workload '" + workload + "' (valid: <model>_<batch> with model one of " +
                           joined_names() + ")");
  }
  auto net = std::make_unique<Network>(batch);
  builders().at(model)(*net);
  return net;
}

}  // namespace salus::gpu
