#!/usr/bin/env bash
# The one-command GPU check (docs/DESIGN.md, "Measuring"):
#
#   scripts/check/gpu_check.sh <out-dir>
#
# 1. fails at once without a usable GPU (nvidia-smi must list one);
# 2. configures (Release) and builds with all cores;
# 3. runs every test with GEMM_MLP_REQUIRE_GPU=1 (a GPU test fails rather than skips) and fails if
#    any test failed or was skipped. The allowed skips: RealMnist.* when the MNIST files are
#    absent from MNIST_DIR (a data skip, not a GPU skip; it is named in the summary), and
#    PyTorch.* when the configure found no PyTorch to build the torch op against (where it did,
#    they run; scripts/pytorch/torch_op_check.sh runs them and the op's measurements);
# 4. runs gemm_bench on its default shapes (validation against cuBLAS included), on the GEMMs of
#    the three standard models' training steps, and on NT and TN squares; writes the `auto`
#    variant's table from those runs (gemm_bench --from-json);
# 4a. scripts/check/small_m.sh: the production variants beside cuBLAS at the three models' step
#    GEMMs, flushed and warm, and gemm_bench --phases from a second build with in-kernel
#    timestamps (BUILD_DIR-phases);
# 4b. runs compute-sanitizer's memcheck, racecheck, synccheck and initcheck over every device
#    variant on odd shapes with each epilogue (scripts/check/sanitize.sh; every row must be 0);
# 5. if train_mlp was built and MNIST is present, runs a short training comparison, once with the
#    whole step replayed as one CUDA graph and once launch by launch (--no-graph);
# 5b. if train_mlp was built and MNIST is present, scripts/check/odd_widths.py: the production
#    variants against what they replace, trained at widths and batches no standard model uses
#    (the `auto` rule is checked against the kernels/auto_table.inc this build compiled);
# 6. where PyTorch is installed, scripts/pytorch/vs_pytorch.py: our train_mlp beside PyTorch
#    eager and PyTorch with the whole step in one CUDA graph; and
#    scripts/pytorch/torch_roundtrip.py: checkpoints both ways between train_mlp and PyTorch;
# 7. the training step's critical path (scripts/check/critical_path.py, under ncu): the default
#    model, 784-1024-1024-10 at batch 256, with tf32_fast and tf32x3_fast.
#
# Writes at most 8 files to <out-dir>, no sub-folders:
#   gpu_check.log      every step: commands, nvidia-smi, configure/build, train_mlp output
#   summary.txt        tests run/failed/skipped, bench and training status, PASS/FAIL
#   ctest.log          ctest --output-on-failure (the JUnit file stays in the build folder)
#   gemm_bench.csv     the default benchmark's results (bench_to_docs.py, plot_bench.py read it)
#   gemm_bench.json    the same with device and method
#   mlp_shapes.json    a second benchmark over the nine GEMMs of an MLP training step (NT, NN, TN)
#   mlp4096_shapes.json  the same for the wide model, 784-4096-4096-10 at batch 512
#   auto_shapes.json   the same for the small model, 784-512-512-10 at batch 128, and the squares
#                      1024..8192 in NT and TN
#   auto_table.inc     the `auto` variant's table for this GPU alone, from gemm_bench.json and the
#                      three *_shapes.json (scripts/docs/update_auto_table.py OUT files those four
#                      in docs/results/ by GPU and writes the shipped kernels/auto_table.inc, one
#                      block per GPU; rebuild, then run the odd step)
#   small_m.csv, small_m.json, phases.csv   scripts/check/small_m.sh (and small_m_build.log)
#   sanitizers.csv, sanitizers.log, racecheck_named_barrier.txt   scripts/check/sanitize.sh
#   train_compare.csv  train_mlp --compare results (the CUDA graph)
#   train_compare_nograph.csv   the same, launch by launch
#   odd_widths.csv     scripts/check/odd_widths.py: s/epoch per odd model and variant (the rules'
#                      table is in gpu_check.log)
#   vs_pytorch.csv, vs_pytorch.json   scripts/pytorch/vs_pytorch.py
#   roofline.csv       scripts/docs/roofline.py: the step's floor beside each vs_pytorch.csv time
#   critical_path.csv  scripts/check/critical_path.py: every kernel of the step of both variants,
#                      its time and whether it is on the critical path (the paths: gpu_check.log)
# (more than 8: a caller that can fetch only 8 should pack the folder). The benchmark tables
# themselves are in gpu_check.log.
#
# Environment:
#   BUILD_DIR     build folder (default build-gpu)
#   CUDA_ARCHS    CMAKE_CUDA_ARCHITECTURES (default 90: the H200 only, for build speed)
#   CMAKE_ARGS    extra configure arguments (word-split)
#   BUILD_TARGETS build only these targets (space-separated; default: all). Test executables
#                 left unbuilt show up in ctest as skipped "<name>_NOT_BUILT" tests, which fail
#                 the check: restrict CTEST_ARGS accordingly (e.g. "-R Gemm")
#   MNIST_DIR     MNIST files (default data/mnist)
#   STEPS         comma-separated subset of build,test,bench,phases,sanitize,train,odd,vs,path
#                 (default: all nine), e.g. to split the check across several shorter commands that
#                 share BUILD_DIR; an unknown name is an error
#   SANITIZE_VARIANTS  the sanitize step's variants (word-split; default: every device variant),
#                 e.g. "tf32_fast tf32x3_fast"
#   CTEST_ARGS    extra ctest arguments (word-split), e.g. "-R Gemm"
#   BENCH_ARGS    extra gemm_bench arguments (word-split), e.g. "--max-seconds-per-case 5"; the
#                 table's --from-json step takes none
#   SOURCE_COMMIT the commit to name in the summary, where the copy's git metadata is not the
#                 source's (default: git rev-parse --short HEAD, followed by ", with changes to
#                 tracked files" where they differ from it)
#   TRAIN_EPOCHS  epochs for the training comparison (default 2)
#   TRAIN_COMPARE variants added to every fp32 device variant in --compare (default:
#                 tf32,wgmma,wgmma_ws,tf32_fast,cublas_tf32)
#   ODD_ARGS      extra scripts/check/odd_widths.py arguments (word-split), e.g. "--epochs 3"
#   VS_ARGS       extra scripts/pytorch/vs_pytorch.py arguments (word-split), e.g. "--epochs 3"
#   CRITICAL_PATH_ARGS  extra scripts/check/critical_path.py arguments (word-split), e.g.
#                 "--steps 8 --keep /tmp/path" (--keep: each variant's graph JSON and ncu CSV)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

if [ $# -ne 1 ]; then
  echo "usage: scripts/check/gpu_check.sh <out-dir>" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
# The steps, each a script of scripts/check/gpu_check/ sourced here: they share this shell's
# variables (out, build_dir, mnist_dir, steps, jobs) and common.sh's helpers.
steps_dir="$repo/scripts/check/gpu_check"
# shellcheck source=gpu_check/common.sh
source "$steps_dir/common.sh"
build_dir=$(in_repo "${BUILD_DIR:-build-gpu}")
mnist_dir=$(in_repo "${MNIST_DIR:-data/mnist}")
all_steps=build,test,bench,phases,sanitize,train,odd,vs,path
steps=",${STEPS:-$all_steps},"
for step in ${steps//,/ }; do
  if [[ ",$all_steps," != *",$step,"* ]]; then
    echo "gpu_check.sh: unknown step '$step' in STEPS (the steps: $all_steps)" >&2
    exit 2
  fi
done
jobs=$(nproc)
start_log gpu_check

trap 'on_exit $?' EXIT
# shellcheck source=gpu_check/build_test.sh
source "$steps_dir/build_test.sh"
# shellcheck source=gpu_check/bench.sh
source "$steps_dir/bench.sh"
# shellcheck source=gpu_check/training.sh
source "$steps_dir/training.sh"

exit "$overall"
