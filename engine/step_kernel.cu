// The step kernel's host side (step_kernel.h): which networks and variants it serves, its plans
// and buffers, and its launch; the kernel is step_kernel_device.cuh's. sm_90a only
// (engine/CMakeLists.txt): its GEMM units are kernels/fast/step_tile.cuh's tiles.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <tuple>
#include <type_traits>
#include <vector>

#include "base/device_buffer.h"
#include "base/launch.cuh"
#include "engine/backend.h"
#include "engine/context_value.h"
#include "engine/ops.h"
#include "engine/step_kernel.h"
#include "engine/step_kernel_device.cuh"
#include "engine/step_plan.h"
#include "kernels/fast/step_tile.cuh"

namespace engine {

namespace {

// A wait's time limit unless set_wait_timeout() says otherwise: 10 s, or GEMM_MLP_STEP_WAIT_S
// seconds where that is set (a run under compute-sanitizer, which slows a unit a hundredfold).
constexpr const char* kWaitVariable = "GEMM_MLP_STEP_WAIT_S";
long long default_timeout_ns() {
  const char* env = std::getenv(kWaitVariable);
  if (env == nullptr) return 10'000'000'000LL;
  char* end = nullptr;
  const double seconds = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(seconds > 0.0) || !(seconds <= 1e6))
    throw Error(std::string("step kernel: ") + kWaitVariable +
                " must be a number of seconds in (0, 1e6], got '" + env + "'");
  return static_cast<long long>(seconds * 1e9);
}

// The network as the kernel runs it: its Linear layers, each with whether a ReLU follows.
struct Layer {
  Linear* linear;
  bool relu;
};

// net's layers, or "" and why not in *why.
std::vector<Layer> layers_of(Module& net, std::string* why) {
  auto* seq = dynamic_cast<Sequential*>(&net);
  if (seq == nullptr) {
    *why = "the network is not a Sequential (" + net.describe() + ")";
    return {};
  }
  std::vector<Layer> layers;
  for (size_t i = 0; i < seq->size(); ++i) {
    Module& m = (*seq)[i];
    if (auto* linear = dynamic_cast<Linear*>(&m)) {
      layers.push_back({linear, false});
    } else if (dynamic_cast<ReLU*>(&m) != nullptr && !layers.empty() && !layers.back().relu) {
      layers.back().relu = true;
    } else {
      *why = "module " + std::to_string(i) + " (" + m.describe() +
             ") is not a Linear, or a ReLU after a Linear";
      return {};
    }
  }
  if (layers.empty()) *why = "the network has no Linear layer";
  if (static_cast<int>(layers.size()) > kMaxLayers)
    *why = "the network has " + std::to_string(layers.size()) +
           " Linear layers; the kernel takes " + std::to_string(kMaxLayers);
  return why->empty() ? layers : std::vector<Layer>{};
}

// The tiles a variant's GEMMs run as in the kernel, or why it has none.
const char* arithmetic_of(const gemm::Variant& v, Arithmetic* arithmetic) {
  const std::string name = v.name;
  if (name == "tf32_fast") {
    *arithmetic = Arithmetic::Tf32;
  } else if (name == "tf32x3_fast" || name == "auto") {
    *arithmetic = Arithmetic::Tf32x3;
  } else {
    return "it runs the production variants tf32_fast, tf32x3_fast and auto only";
  }
  return nullptr;
}

template <Arithmetic A>
constexpr auto kPlanKernel = plan_kernel<A>;

// f(std::integral_constant<Arithmetic, a>{}): what depends on the kernel's arithmetic, chosen once.
template <class F>
decltype(auto) with_arithmetic(Arithmetic a, F&& f) {
  if (a == Arithmetic::Tf32) return f(std::integral_constant<Arithmetic, Arithmetic::Tf32>{});
  return f(std::integral_constant<Arithmetic, Arithmetic::Tf32x3>{});
}

// The most clusters of `cluster_size` blocks of the kernel resident at once (it needs them all at
// once): single blocks per multiprocessor times multiprocessors; clusters as tf32_fast's cluster
// split-K counts them (cudaOccupancyMaxActiveClusters).
template <Arithmetic A>
int resident_clusters(int cluster_size) {
  static const int single = [] {
    CUDA_CHECK(cudaFuncSetAttribute(kPlanKernel<A>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    Tile<A>::kSmemBytes));
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, kPlanKernel<A>, Tile<A>::kThreads, Tile<A>::kSmemBytes));
    return per_sm * gemm::detail::multiprocessor_count();
  }();
  if (cluster_size == 1) return single;
  return gemm::detail::max_active_clusters(reinterpret_cast<const void*>(kPlanKernel<A>),
                                           cluster_size, Tile<A>::kThreads, Tile<A>::kSmemBytes);
}

// The default cluster size: the largest of 8, 4 and 2 blocks whose clusters, one for each tile of
// the forward layer with the most (at a full batch), are all resident at once; else 1. K is
// shared as far as one wave of the chip allows, as tf32_fast's cluster split-K fills one wave.
template <Arithmetic A>
int default_cluster_size(const std::vector<int>& widths, int batch) {
  int tiles = 0;
  for (size_t l = 1; l < widths.size(); ++l)
    tiles = std::max(tiles, (batch + Tile<A>::kM - 1) / Tile<A>::kM *
                                ((widths[l] + Tile<A>::kN - 1) / Tile<A>::kN));
  for (int size = StepKernel::kMaxClusterBlocks; size > 1; size /= 2)
    if (tiles <= resident_clusters<A>(size)) return size;
  return 1;
}

// A plan in device memory.
struct DevicePlan {
  step_plan::Plan plan;
  gemm::DeviceBuffer<Unit> units;
  gemm::DeviceBuffer<step_plan::Group> groups;  // the units as the clusters take them, by cluster
  gemm::DeviceBuffer<int> cluster_first;        // cluster c's groups from cluster_first[c]
  int clusters = 0;                             // the grid's
  gemm::DeviceBuffer<Wait> waits;
  gemm::DeviceBuffer<int> signals;
};

// The plan's units for K slices of forward_splits and clusters of cluster_size blocks: a Loss or
// a Gather unit is a row for every warp of the cluster.
step_plan::UnitSizes unit_sizes(int forward_splits, int cluster_size) {
  step_plan::UnitSizes sizes;
  sizes.tile_m = Tile<Arithmetic::Tf32>::kM;
  sizes.tile_n = Tile<Arithmetic::Tf32>::kN;
  sizes.k_granule = Tile<Arithmetic::Tf32>::kK;
  sizes.loss_rows = Tile<Arithmetic::Tf32>::kThreads / cuda::kWarp * cluster_size;
  sizes.gather_rows = sizes.loss_rows;
  sizes.forward_splits = forward_splits;
  return sizes;
}
static_assert(Tile<Arithmetic::Tf32>::kM == Tile<Arithmetic::Tf32x3>::kM &&
                  Tile<Arithmetic::Tf32>::kN == Tile<Arithmetic::Tf32x3>::kN &&
                  Tile<Arithmetic::Tf32>::kK == Tile<Arithmetic::Tf32x3>::kK &&
                  Tile<Arithmetic::Tf32>::kThreads == Tile<Arithmetic::Tf32x3>::kThreads,
              "both arithmetics' tiles are the plan's tiles, in blocks of one size");
static_assert(step_plan::kTf32UnitCost.k_tile == Tile<Arithmetic::Tf32>::kK &&
                  step_plan::kTf32x3UnitCost.k_tile == Tile<Arithmetic::Tf32x3>::kK,
              "the tile costs are per K tile of the step tile");

}  // namespace

struct StepKernel::Impl {
  Arithmetic arithmetic = Arithmetic::Tf32;
  std::vector<Layer> layers;
  std::vector<int> widths;
  int max_batch = 0;
  bool cross_entropy = true;
  std::vector<Tensor> activations;  // Y_l: max_batch × d_{l+1}
  Tensor outputs;                   // the last evaluation's view of the last one
  // By batch size, scope and steps.
  using PlanKey = std::tuple<int, step_plan::Scope, int>;
  std::map<PlanKey, DevicePlan> plans;
  std::vector<Tensor> gradients;  // G_l: max_batch × d_{l+1}, for train()
  int forward_splits = 1;
  int cluster_size = 1;  // set by the constructor
  bool tile_per_block = true;
  bool schedule_by_cost = true;
  gemm::DeviceBuffer<int> counters;
  gemm::DeviceBuffer<LossPartial> slots;
  gemm::DeviceBuffer<float> partials;   // every layer's slices' planes, where split
  std::vector<size_t> partial_offsets;  // layer l's planes at partials + this (16-byte aligned)
  std::unique_ptr<ContextValue<WaitFailure>> failure;
  long long timeout_ns = default_timeout_ns();
  int grid_limit = 0;
  bool record_timeline = false;
  gemm::DeviceBuffer<StepKernel::UnitTime> timeline;  // grown to the largest plan recorded
  int last_units = 0;                                 // the last launch's, where it recorded them

  // The plan of `steps` steps of `batch` rows, built and uploaded the first time; where it has
  // more counters than the buffer holds, the buffer grows (after the launches that use it).
  const DevicePlan& plan_for(int batch, step_plan::Scope scope, int steps, cudaStream_t stream) {
    auto it = plans.find({batch, scope, steps});
    if (it != plans.end()) return it->second;
    DevicePlan d;
    d.plan = step_plan::make_plan({widths, batch}, unit_sizes(forward_splits, cluster_size), scope,
                                  steps);
    if (d.plan.counters.size() > counters.size()) {
      CUDA_CHECK(cudaStreamSynchronize(stream));
      counters = gemm::DeviceBuffer<int>(d.plan.counters.size());
    }
    d.units = gemm::DeviceBuffer<Unit>(d.plan.units, stream);
    const step_plan::Schedule schedule = schedule_of(d.plan);
    d.groups = gemm::DeviceBuffer<step_plan::Group>(schedule.groups, stream);
    d.cluster_first = gemm::DeviceBuffer<int>(schedule.first, stream);
    d.clusters = static_cast<int>(schedule.first.size()) - 1;
    d.waits = gemm::DeviceBuffer<Wait>(d.plan.waits, stream);
    d.signals = gemm::DeviceBuffer<int>(d.plan.signals, stream);
    return plans.emplace(PlanKey{batch, scope, steps}, std::move(d)).first->second;
  }

  // optimizer: a training launch of `steps` steps (else an evaluation), and with `next` its
  // gathers.
  void launch(Context& ctx, const Tensor& x, const void* targets, Metrics& metrics,
              Optimizer* optimizer, const NextBatch* next = nullptr, int steps = 1);
  void fill_training(LaunchArgs& a, const std::vector<Tensor>& inputs, int batch,
                     Optimizer& optimizer);

  // The plan of a full batch, and what its size sets: the counters, the Loss units' slots and the
  // slices' planes.
  // Waits for the stream first: no launch still reads the old plans and buffers.
  void prepare(cudaStream_t stream) {
    CUDA_CHECK(cudaStreamSynchronize(stream));
    plans.clear();
    counters = gemm::DeviceBuffer<int>();
    plan_for(max_batch, step_plan::Scope::Evaluate, 1, stream);
    plan_for(max_batch, step_plan::Scope::Step, 1, stream);
    const int loss_rows = unit_sizes(forward_splits, cluster_size).loss_rows;
    slots = gemm::DeviceBuffer<LossPartial>((max_batch + loss_rows - 1) / loss_rows);
    partial_offsets.clear();
    size_t floats = 0;
    for (size_t l = 1; l < widths.size(); ++l) {
      partial_offsets.push_back(floats);
      floats += (static_cast<size_t>(forward_splits) * max_batch * widths[l] + 3) / 4 * 4;
    }
    partials = forward_splits > 1 ? gemm::DeviceBuffer<float>(floats) : gemm::DeviceBuffer<float>();
  }

  // The plan's units in groups (step_plan::group_units), and which cluster runs each
  // (step_plan::schedule_groups), on at most one cluster per group.
  step_plan::Schedule schedule_of(const step_plan::Plan& plan) const {
    const step_plan::UnitCost& cost =
        arithmetic == Arithmetic::Tf32x3 ? step_plan::kTf32x3UnitCost : step_plan::kTf32UnitCost;
    const int available = available_clusters();
    const std::vector<step_plan::Group> groups =
        step_plan::group_units(plan, tile_per_block ? cluster_size : 1, available, cost);
    return step_plan::schedule_groups(
        plan, groups, cluster_size, std::min(static_cast<int>(groups.size()), available), cost,
        schedule_by_cost ? step_plan::Assignment::Soonest : step_plan::Assignment::RoundRobin);
  }

  // The clusters a launch may use: every one resident at once (at least one, else an error),
  // within the grid limit (in blocks; at least one cluster).
  int available_clusters() const {
    const int resident = with_arithmetic(
        arithmetic, [&](auto t) { return resident_clusters<decltype(t)::value>(cluster_size); });
    if (resident < 1)
      throw Error("step kernel: not one cluster of " + std::to_string(cluster_size) +
                  " blocks fits on the GPU");
    return grid_limit > 0 ? std::min(resident, std::max(1, grid_limit / cluster_size)) : resident;
  }
};

std::string StepKernel::unavailable_reason(const Context& ctx, Module& net) {
  if (!ctx.is_cuda()) return "the step kernel runs on the GPU only";
  Arithmetic arithmetic;
  if (const char* why = arithmetic_of(ctx.variant(), &arithmetic))
    return std::string("the step kernel does not serve variant ") + ctx.variant().name + ": " + why;
  if (const char* why = gemm::detail::wgmma_unavailable())
    return std::string("the step kernel needs wgmma: ") + why;
  std::string why;
  layers_of(net, &why);
  if (!why.empty()) return "the step kernel does not serve this network: " + why;
  return "";
}

StepKernel::StepKernel(Context& ctx, Module& net, int max_batch, bool cross_entropy)
    : impl_(std::make_unique<Impl>()) {
  if (const std::string why = unavailable_reason(ctx, net); !why.empty()) throw Error(why);
  if (max_batch < 1) throw Error("step kernel: max_batch must be >= 1");
  Impl& k = *impl_;
  arithmetic_of(ctx.variant(), &k.arithmetic);
  std::string why;
  k.layers = layers_of(net, &why);
  k.max_batch = max_batch;
  k.cross_entropy = cross_entropy;
  k.widths.push_back(k.layers.front().linear->in_features());
  for (const Layer& l : k.layers) {
    const Tensor& w = l.linear->weight().value;
    if (w.cols() != k.widths.back())
      throw Error("step kernel: a Linear of " + std::to_string(w.cols()) + " inputs after " +
                  std::to_string(k.widths.back()) + " outputs");
    k.widths.push_back(w.rows());
    k.activations.emplace_back(Device::CUDA, max_batch, w.rows());
    k.gradients.emplace_back(Device::CUDA, max_batch, w.rows());
  }
  k.cluster_size = with_arithmetic(k.arithmetic, [&](auto t) {
    return default_cluster_size<decltype(t)::value>(k.widths, max_batch);
  });
  k.prepare(ctx.stream());
  k.failure = std::make_unique<ContextValue<WaitFailure>>(ctx);
}

StepKernel::~StepKernel() = default;

void StepKernel::evaluate(Context& ctx, const Tensor& x, const void* targets, Metrics& metrics) {
  impl_->launch(ctx, x, targets, metrics, nullptr);
}

void StepKernel::train(Context& ctx, const Tensor& x, const void* targets, Metrics& metrics,
                       Optimizer& optimizer, const NextBatch* next, int steps) {
  const Impl& k = *impl_;
  if (steps < 1) throw Error("step kernel: a launch of " + std::to_string(steps) + " steps");
  if (steps > 1 && next == nullptr)
    throw Error("step kernel: a launch of " + std::to_string(steps) +
                " steps gathers its batches, and has no source (NextBatch)");
  if (next != nullptr) {
    const gemm_mlp::BatchSource& s = next->source;
    if (const std::string why = gemm_mlp::batch_source_problem(s); !why.empty())
      throw Error("step kernel: " + why);
    if (!k.cross_entropy)
      throw Error(
          "step kernel: a gather brings labels, and this kernel's loss is the squared "
          "error on float targets");
    if (s.features != x.cols() || s.full_batch() > k.max_batch)
      throw Error("step kernel: a source of batches of " + std::to_string(s.full_batch()) +
                  " rows of " + std::to_string(s.features) + " for x of " + x.shape() +
                  " in a kernel of batches up to " + std::to_string(k.max_batch));
    if (steps > 1 && x.rows() != s.full_batch())
      throw Error("step kernel: a launch of " + std::to_string(steps) +
                  " steps runs full batches of " + std::to_string(s.full_batch()) +
                  " rows, and x is " + x.shape());
  }
  impl_->launch(ctx, x, targets, metrics, &optimizer, next, steps);
}

void StepKernel::Impl::launch(Context& ctx, const Tensor& x, const void* targets, Metrics& metrics,
                              Optimizer* optimizer, const NextBatch* next, int steps) {
  const int batch = x.rows();
  if (batch < 1 || batch > max_batch || x.cols() != widths.front())
    throw Error("step kernel: x is " + x.shape() + ", prepared for 1.." +
                std::to_string(max_batch) + " rows of " + std::to_string(widths.front()));
  if (targets == nullptr) throw Error("step kernel: no labels or targets");
  const bool training = optimizer != nullptr;
  const cudaStream_t stream = ctx.stream();
  const DevicePlan& d = plan_for(
      batch, training ? step_plan::Scope::Step : step_plan::Scope::Evaluate, steps, stream);

  LaunchArgs a{};
  std::vector<Tensor> inputs;  // X_l: the batch, then each Y_l
  inputs.reserve(layers.size() + 1);
  inputs.push_back(Tensor::view(Device::CUDA, const_cast<float*>(x.data()), batch, x.cols()));
  for (size_t l = 0; l < layers.size(); ++l) {
    Linear& linear = *layers[l].linear;
    Tensor& y = activations[l];
    inputs.push_back(Tensor::view(Device::CUDA, y.data(), batch, y.cols()));
    const gemm::Problem p =
        forward_problem(inputs[l], linear.weight().value, linear.bias().value, inputs.back(),
                        layers[l].relu ? Activation::Relu : Activation::None);
    a.forward[l] = with_arithmetic(arithmetic, [&](auto t) {
      return gemm::step_tile::tile_gemm<decltype(t)::value, gemm::step_tile::Layout::NT>(p);
    });
  }
  for (size_t l = 0; l < layers.size() && partials.size() > 0; ++l)
    a.partials[l] = partials.data() + partial_offsets[l];
  for (size_t l = 0; l < widths.size(); ++l) a.widths[l] = widths[l];
  if (training) fill_training(a, inputs, batch, *optimizer);
  a.units = d.units.data();
  a.groups = d.groups.data();
  a.cluster_first = d.cluster_first.data();
  a.waits = d.waits.data();
  a.signals = d.signals.data();
  a.counters = counters.data();
  a.failure = failure->get();
  a.slots = slots.data();
  a.metrics = metrics.counters();
  a.outputs = inputs.back().data();
  a.labels = cross_entropy ? static_cast<const int32_t*>(targets) : nullptr;
  a.targets = cross_entropy ? nullptr : static_cast<const float*>(targets);
  if (record_timeline && timeline.size() < d.plan.units.size()) {
    timeline = gemm::DeviceBuffer<UnitTime>(d.plan.units.size());
    // Its padding too is defined when timeline() copies it (initcheck).
    CUDA_CHECK(cudaMemsetAsync(timeline.data(), 0, timeline.size() * sizeof(UnitTime), stream));
  }
  a.timeline = record_timeline ? timeline.data() : nullptr;
  a.timeout_ns = timeout_ns;
  a.batch = batch;
  a.outputs_width = widths.back();
  a.loss_rows = unit_sizes(forward_splits, cluster_size).loss_rows;
  a.steps = steps;
  if (next != nullptr) {
    a.source = next->source;
    a.batch_x = const_cast<float*>(x.data());
    a.batch_labels = const_cast<int32_t*>(static_cast<const int32_t*>(targets));
    a.gather_steps = next->after_last ? steps : steps - 1;
  }
  outputs = std::move(inputs.back());
  last_units = record_timeline ? static_cast<int>(d.plan.units.size()) : 0;

  CUDA_CHECK(cudaMemsetAsync(counters.data(), 0, d.plan.counters.size() * sizeof(int), stream));
  with_arithmetic(arithmetic, [&](auto t) {
    constexpr Arithmetic A = decltype(t)::value;
    gemm::LaunchShape shape{dim3(d.clusters, 1, cluster_size), dim3(Tile<A>::kThreads),
                            static_cast<size_t>(Tile<A>::kSmemBytes), stream,
                            static_cast<unsigned>(cluster_size)};
    shape.cooperative = true;
    gemm::launch_kernel(kPlanKernel<A>, shape, a);
  });
}

// A training step's part of the launch: the loss's gradient, the backward GEMMs (G_{l−1} and
// dW_l), the bias gradients' outputs, the parameters with the optimiser's state, and the count.
void StepKernel::Impl::fill_training(LaunchArgs& a, const std::vector<Tensor>& inputs, int batch,
                                     Optimizer& optimizer) {
  if (forward_splits != 1)
    throw Error("step kernel: a training step runs unsplit tiles (forward splits 1, got " +
                std::to_string(forward_splits) + "); clusters share their K");
  std::vector<Tensor> g;  // G_l for this batch
  for (size_t l = 0; l < layers.size(); ++l)
    g.push_back(Tensor::view(Device::CUDA, gradients[l].data(), batch, widths[l + 1]));
  for (size_t l = 0; l < layers.size(); ++l) {
    Linear& linear = *layers[l].linear;
    Parameter& w = linear.weight();
    Parameter& b = linear.bias();
    a.grads[l] = g[l].data();
    const gemm::Problem dw = weight_gradient_problem(g[l], inputs[l], 0.0f, w.grad);
    a.weight_grad[l] = with_arithmetic(arithmetic, [&](auto t) {
      return gemm::step_tile::tile_gemm<decltype(t)::value, gemm::step_tile::Layout::TN>(dw);
    });
    if (l > 0) {
      const gemm::Problem dx =
          input_gradient_problem(g[l], w.value, inputs[l], layers[l - 1].relu, g[l - 1]);
      a.input_grad[l] = with_arithmetic(arithmetic, [&](auto t) {
        return gemm::step_tile::tile_gemm<decltype(t)::value, gemm::step_tile::Layout::NN>(dx);
      });
    }
    const auto [w0, w1] = optimizer.state_of(w);
    const auto [b0, b1] = optimizer.state_of(b);
    a.params[l] = {w.value.data(), b.value.data(), w.grad.data(), b.grad.data(), w0, w1, b0, b1};
  }
  a.training = true;
  a.rule = optimizer.update_rule();
  a.step_count = optimizer.count_step_elsewhere();
  a.loss_scale = cross_entropy ? 1.0f / static_cast<float>(batch)
                               : 2.0f / (static_cast<float>(batch) * widths.back());
}

void StepKernel::check(Context& ctx) {
  Impl& k = *impl_;
  const WaitFailure f = k.failure->read(ctx);
  if (f.failed == 0) return;
  k.failure->zero(ctx);
  const auto it = k.plans.find(
      {f.batch, f.training != 0 ? step_plan::Scope::Step : step_plan::Scope::Evaluate, f.steps});
  if (it == k.plans.end())
    throw Error("step kernel: a wait gave up in a plan of " + std::to_string(f.steps) +
                " steps of " + std::to_string(f.batch) + " rows, which was not built");
  throw Error(step_plan::describe(it->second.plan, {f.unit, f.wait, f.reached}));
}

const Tensor& StepKernel::outputs() const { return impl_->outputs; }

void StepKernel::set_wait_timeout(double seconds) {
  if (!(seconds > 0.0)) throw Error("step kernel: the wait timeout must be > 0 seconds");
  impl_->timeout_ns = static_cast<long long>(seconds * 1e9);
}

void StepKernel::set_grid_limit(Context& ctx, int blocks) {
  if (blocks < 0) throw Error("step kernel: a grid limit must be >= 0 (0: no limit)");
  impl_->grid_limit = blocks;
  impl_->prepare(ctx.stream());
}

void StepKernel::record_timeline(bool on) {
  Impl& k = *impl_;
  k.record_timeline = on;
  if (!on) k.timeline = gemm::DeviceBuffer<UnitTime>();
}

std::vector<StepKernel::UnitTime> StepKernel::timeline(Context& ctx) const {
  const Impl& k = *impl_;
  if (!k.record_timeline || k.last_units == 0)
    throw Error("step kernel: no launch recorded its timeline (record_timeline(true) first)");
  std::vector<UnitTime> t(k.last_units);
  k.timeline.download(t.data(), t.size(), ctx.stream());
  return t;
}

void StepKernel::set_forward_splits(Context& ctx, int splits) {
  if (splits < 1 || splits > 64)
    throw Error("step kernel: forward splits must be 1..64, got " + std::to_string(splits));
  impl_->forward_splits = splits;
  impl_->prepare(ctx.stream());
}

void StepKernel::set_tile_per_block(Context& ctx, bool on) {
  impl_->tile_per_block = on;
  impl_->prepare(ctx.stream());
}

void StepKernel::set_schedule_by_cost(Context& ctx, bool on) {
  impl_->schedule_by_cost = on;
  impl_->prepare(ctx.stream());
}

void StepKernel::set_cluster_size(Context& ctx, int blocks) {
  if (blocks < 1 || blocks > kMaxClusterBlocks)
    throw Error("step kernel: a cluster is 1.." + std::to_string(kMaxClusterBlocks) +
                " blocks, got " + std::to_string(blocks));
  impl_->cluster_size = blocks;
  impl_->prepare(ctx.stream());
}

int StepKernel::cluster_size() const { return impl_->cluster_size; }

int StepKernel::grid_blocks(int batch, int training_steps) const {
  const Impl& k = *impl_;
  if (training_steps < 0)
    throw Error("step kernel: grid_blocks of " + std::to_string(training_steps) + " steps");
  const step_plan::Plan plan =
      step_plan::make_plan({k.widths, batch}, unit_sizes(k.forward_splits, k.cluster_size),
                           training_steps > 0 ? step_plan::Scope::Step : step_plan::Scope::Evaluate,
                           std::max(1, training_steps));
  return (static_cast<int>(k.schedule_of(plan).first.size()) - 1) * k.cluster_size;
}

}  // namespace engine
