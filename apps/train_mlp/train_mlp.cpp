// train_mlp: trains an MLP on MNIST with every matrix product going through the chosen GEMM
// variant, and reports per-epoch time split into GEMM time and the rest.
//
//   train_mlp                          784-1024-1024-10, 10 epochs, SGD (lr 0.1, momentum 0.9,
//                                      weight decay 5e-4, cosine decay), --gemm vec
//   train_mlp --gemm naive --epochs 3
//   train_mlp --compare                every FP32 device variant, same model, same seed
//   train_mlp --compare cublas_tf32 --results out.json   ... plus the TF32 one, saved as JSON
//
// The step: engine::Trainer, which on CUDA captures the whole step (batch gather, forward, loss and
// metrics, backward, optimiser) once as a CUDA graph and replays it for every full batch;
// --no-graph runs the same kernels launch by launch, with the same results, bit for bit.
// --step-graph writes the captured step's kernels and dependencies as JSON (step_graph.h).
//
// Timing: an epoch's time runs from its first shuffle to its last optimiser step, as the device
// saw it (CUDA events); evaluation of the test set is outside it. Before the first epoch, one
// untimed, profiled epoch on a scratch copy of the model loads every kernel and cuBLAS and
// measures an epoch's GEMM time (epoch.h); the timed epochs record no per-GEMM events.
//
// Stopping (SIGINT, SIGTERM): apps/train_mlp/stop.h.
//
// This file: the command line's run, from the options to the variants trained and their reports;
// one variant's run is train.h, --resume is resume.h, --eval is evaluate.h.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/train_mlp/evaluate.h"
#include "apps/train_mlp/options.h"
#include "apps/train_mlp/report.h"
#include "apps/train_mlp/resume.h"
#include "apps/train_mlp/run_checks.h"
#include "apps/train_mlp/stop.h"
#include "apps/train_mlp/train.h"
#include "base/cuda_check.h"
#include "base/openblas_threads.h"
#include "data/mnist.h"
#include "engine/engine.h"

namespace {

// The variants to run. TF32 variants are never picked implicitly: only when named.
std::vector<const gemm::Variant*> choose_variants(const Options& o, bool cuda) {
  std::vector<const gemm::Variant*> variants;
  if (o.compare) {
    if (!cuda) throw std::runtime_error("--compare compares GPU variants and needs a CUDA device");
    if (!o.save.empty()) throw std::runtime_error("--save is for a single run, not --compare");
    for (const std::string& name : o.compare_extra) gemm::find_variant(name);  // check names
    for (const gemm::Variant& v : gemm::variants()) {
      const bool named = std::find(o.compare_extra.begin(), o.compare_extra.end(), v.name) !=
                         o.compare_extra.end();
      if (v.device != engine::Device::CUDA) {
        if (named)
          throw std::runtime_error(std::string("--compare: '") + v.name +
                                   "' is a host variant; --compare runs on the GPU");
        continue;
      }
      if (v.precision == gemm::Precision::FP32 || named) variants.push_back(&v);
    }
  } else {
    const std::string name = o.gemm.empty() ? (cuda ? "vec" : "cpu") : o.gemm;
    const gemm::Variant* found = nullptr;
    try {
      found = &gemm::find_variant(name);
    } catch (const gemm_mlp::Error&) {
      if (o.resume.empty() || o.given.count("--gemm")) throw;
      throw std::runtime_error("--resume " + o.resume + ": the run used GEMM variant '" + name +
                               "', which this build does not have; give --gemm");
    }
    const gemm::Variant& v = *found;
    if ((v.device == engine::Device::CUDA) != cuda && !o.resume.empty() && !o.given.count("--gemm"))
      throw std::runtime_error(
          "--resume " + o.resume + ": the run used --gemm " + v.name + ", which runs on the " +
          (cuda ? "host, but training runs on the GPU: give --device cpu"
                : "GPU, but training runs on the CPU: run it on a GPU") +
          " to continue it as it was, or --gemm " + (cuda ? "with a device variant" : "cpu"));
    if ((v.device == engine::Device::CUDA) != cuda)
      throw std::runtime_error(std::string("--gemm ") + v.name + " runs on the " +
                               (v.device == engine::Device::CUDA ? "GPU" : "host") +
                               ", but training runs on " + (cuda ? "the GPU" : "the CPU") +
                               (cuda ? " (use a device variant)" : " (use --gemm cpu)"));
    variants.push_back(&v);
  }
  for (const gemm::Variant* v : variants)  // e.g. wgmma on a GPU other than Hopper
    if (cuda)
      if (const char* why = gemm::unavailable_reason(*v)) throw std::runtime_error(why);
  return variants;
}

// The training and test sets, checked against each other and the model, and the training set
// cut to --train-limit; --batch is cut to the training examples.
std::pair<data::Dataset, data::Dataset> load_data(Options& o, engine::Device device) {
  data::Dataset train_set = data::load_mnist(o.data_dir, data::Split::Train, o.dataset);
  data::Dataset test_set = data::load_mnist(o.data_dir, data::Split::Test, o.dataset);
  if (train_set.rows != test_set.rows || train_set.cols != test_set.cols)
    throw std::runtime_error("the training images are " + std::to_string(train_set.rows) + "x" +
                             std::to_string(train_set.cols) + ", the test images " +
                             std::to_string(test_set.rows) + "x" + std::to_string(test_set.cols));
  if (o.train_limit > 0 && o.train_limit < train_set.count) {
    train_set.count = o.train_limit;
    train_set.images.resize(static_cast<size_t>(o.train_limit) * train_set.features());
    train_set.labels.resize(static_cast<size_t>(o.train_limit));
  }

  if (o.batch > train_set.count) {
    std::cout << "note: --batch " << o.batch << " is larger than the " << train_set.count
              << " training examples; using " << train_set.count << "\n";
    o.batch = train_set.count;
  }
  require_model_fits(o, train_set.features(), train_set.classes, o.batch, device);
  return {std::move(train_set), std::move(test_set)};
}

int run(Options o) {
  complete_options(o);
  const engine::Device device = gemm_mlp::resolve_device(o.device, "--device");
  if (o.device == "auto" && device == engine::Device::CPU)
    std::cout << "No GPU found: running on the CPU (OpenBLAS).\n";
  if (device == engine::Device::CPU) {
    gemm::reserve_host_scratch();  // before the data's memory
    if (gemm_mlp::openblas_threads_capped())
      std::cout << "note: OpenBLAS runs on one thread under this address-space limit (ulimit -v): "
                   "a thread of its that finds no room for its buffer retries for ever "
                   "(OPENBLAS_NUM_THREADS chooses another count)\n";
  }
  const bool cuda = device == engine::Device::CUDA;
  if (!o.eval.empty())  // on the variant --gemm names, else the device's default
    return evaluate_checkpoint(o, device, o.gemm.empty() ? nullptr : choose_variants(o, cuda)[0]);
  if (!o.step_graph.empty() && !cuda)
    throw std::runtime_error("--step-graph writes the step's CUDA graph; this run is on the CPU");

  const std::vector<const gemm::Variant*> variants = choose_variants(o, cuda);

  // What the flags alone decide, before the data is read.
  if (o.train_limit < 0) throw std::runtime_error("--train-limit must be >= 0");
  for (int h : o.hidden)
    if (h < 1) throw std::runtime_error("--hidden sizes must be >= 1, got " + std::to_string(h));

  // One writer per checkpoint path, for the whole run: a second run saving to it is refused here,
  // before any training (engine::CheckpointLock; a lock file a killed run left blocks nothing).
  std::optional<engine::CheckpointLock> lock;
  if (!o.save.empty()) lock.emplace(o.save);

  std::optional<Resumed> resumed;
  if (!o.resume.empty()) {
    resumed = read_resumed(o);
    if (!resumed) return 0;  // the run is complete: nothing to train
  } else {
    o.run_id = engine::random_identity();
  }

  const auto [train_set, test_set] = load_data(o, device);
  // What the run trains on, in its checkpoints; a resumed run's must be the same.
  o.data_fingerprint = data_fingerprint(train_set);
  o.test_fingerprint = data_fingerprint(test_set);
  if (resumed) check_resumed_data(o, *resumed, train_set.count, o.data_fingerprint);
  std::vector<RunResult> runs;
  for (const gemm::Variant* v : variants)
    runs.push_back(train(o, device, *v, train_set, test_set, resumed ? &*resumed : nullptr));
  for (const RunResult& r : runs) warn_if_loss_exploded(r, train_set.classes, o);
  if (o.compare) print_table(runs);
  if (!o.results.empty()) {
    write_results(o.results, runs);
    std::cout << "results written to " << o.results << "\n";
  }
  return 0;
}

}  // namespace

GEMM_MLP_ONE_OPENBLAS_THREAD_UNDER_ADDRESS_LIMIT;

int main(int argc, char** argv) {
  // Line-buffered even into a file: its lines and stderr's (the stop notice, warnings) keep their
  // order, and a second signal, which ends the process at once, loses none of them.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Options o;
  if (const std::optional<int> status = parse_options(argc, argv, o)) return *status;
  install_stop_handlers(argc > 0 ? argv[0] : "train_mlp", /*at_once=*/!o.eval.empty());
  gemm::set_dependent_launch(!o.no_dependent_launch);
  try {
    const int status = run(o);
    // A report that did not reach its file (e.g. a full disk) is an error, not a silent loss.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      std::cerr << "train_mlp: error: writing the standard output failed\n";
      return 1;
    }
    return status;
  } catch (const Stopped& s) {
    return 128 + s.signal;
  } catch (const Diverged& e) {
    std::cerr << "train_mlp: training diverged: " << e.what()
              << "; no checkpoint was written for it (try a smaller --lr)\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "train_mlp: error: " << e.what() << "\n";
    return 1;
  }
}
