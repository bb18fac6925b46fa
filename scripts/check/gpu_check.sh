#!/usr/bin/env bash
# The one-command GPU check (docs/DESIGN.md, "Measuring"):
#
#   scripts/check/gpu_check.sh <out-dir>
#
# 1. fails at once without a usable GPU (nvidia-smi must list one);
# 2. configures (Release) and builds with all cores;
# 3. runs every test with GEMM_MLP_REQUIRE_GPU=1 (a GPU test fails rather than skips) and fails if
#    any test failed or was skipped. The one allowed skip: RealMnist.* when the MNIST files are
#    absent from MNIST_DIR (a data skip, not a GPU skip; it is named in the summary);
# 4. runs gemm_bench on its default shapes (validation against cuBLAS included), on the GEMMs of
#    the three standard models' training steps, and on NT and TN squares; writes the `auto`
#    variant's table from those runs (gemm_bench --from-json);
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
#   auto_table.inc     the `auto` variant's table from gemm_bench.json and the three *_shapes.json
#                      (copy it to kernels/auto_table.inc and those four to docs/results/, where
#                      GemmBench.ShippedAutoTableIsWhatTheCommittedRunsMake checks them; rebuild,
#                      then run the odd step)
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
#   STEPS         comma-separated subset of build,test,bench,sanitize,train,odd,vs,path (default:
#                 all eight), e.g. to split the check across several shorter commands that share
#                 BUILD_DIR
#   CTEST_ARGS    extra ctest arguments (word-split), e.g. "-R Gemm"
#   BENCH_ARGS    extra gemm_bench arguments (word-split), e.g. "--max-seconds-per-case 5"; the
#                 table's --from-json step takes none
#   SOURCE_COMMIT the commit to name in the summary, where the copy's git metadata is not the
#                 source's (default: git rev-parse --short HEAD)
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
build_dir=${BUILD_DIR:-build-gpu}
case "$build_dir" in /*) ;; *) build_dir="$repo/$build_dir" ;; esac
mnist_dir=${MNIST_DIR:-data/mnist}
case "$mnist_dir" in /*) ;; *) mnist_dir="$repo/$mnist_dir" ;; esac
steps=",${STEPS:-build,test,bench,sanitize,train,odd,vs,path},"
jobs=$(nproc)

main_log="$out/gpu_check.log"
summary="$out/summary.txt"
: >"$main_log"
declare -a summary_lines=()
overall=0

log() { echo "[$(date +%H:%M:%S)] $*" | tee -a "$main_log"; }
note() {  # a line for the summary, logged too
  summary_lines+=("$*")
  log "$*"
}
fail() {
  note "FAIL: $*"
  overall=1
}
# shellcheck disable=SC2317  # called from the EXIT trap
write_summary() {
  {
    echo "gpu_check.sh summary ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
    echo "repo: $repo (commit ${SOURCE_COMMIT:-$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)})"
    echo "build dir: $build_dir, CUDA architectures: ${CUDA_ARCHS:-90}, steps: ${steps//,/ }"
    printf '%s\n' "${summary_lines[@]}"
    if [ "$overall" -eq 0 ]; then echo "RESULT: PASS"; else echo "RESULT: FAIL"; fi
  } >"$summary"
}
# shellcheck disable=SC2317  # the EXIT trap
on_exit() {
  local rc=$1
  if [ "$rc" -ne 0 ] && [ "$overall" -eq 0 ]; then
    summary_lines+=("FAIL: aborted (exit status $rc), see gpu_check.log")
    overall=1
  fi
  write_summary
  echo "----- $summary"
  cat "$summary"
}
trap 'on_exit $?' EXIT

# run_logged <log-file> <command...>: runs it, output appended to the log file and shown;
# returns the command's exit status without tripping set -e.
run_logged() {
  local file=$1
  shift
  log "\$ $*"
  set +e
  "$@" 2>&1 | tee -a "$file"
  local rc=${PIPESTATUS[0]}
  set -e
  return "$rc"
}

mnist_present() {
  local f
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    [ -s "$mnist_dir/$f" ] || [ -s "$mnist_dir/$f.gz" ] || return 1
  done
}

# --- 1. A GPU, or stop here --------------------------------------------------------------------
log "gpu_check.sh: out-dir $out"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  fail "no GPU: nvidia-smi not found"
  exit 1
fi
if ! run_logged "$main_log" nvidia-smi; then
  fail "no GPU: nvidia-smi failed (no driver or no device)"
  exit 1
fi
if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')" -lt 1 ]; then
  fail "no GPU: nvidia-smi lists none"
  exit 1
fi
note "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"

# --- 2. Configure and build --------------------------------------------------------------------
if [[ $steps == *,build,* ]]; then
  # shellcheck disable=SC2206
  extra=(${CMAKE_ARGS:-})
  # The GPU kernels on, whatever the build folder was configured with (scripts/train.sh leaves
  # them out where it finds no GPU).
  if ! run_logged "$main_log" cmake -S "$repo" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
      -DGEMM_MLP_GPU_KERNELS=ON -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-90}" "${extra[@]}"; then
    fail "configure failed (gpu_check.log)"
    exit 1
  fi
  # shellcheck disable=SC2206
  targets=(${BUILD_TARGETS:-})
  target_args=()
  if [ ${#targets[@]} -gt 0 ]; then target_args=(--target "${targets[@]}"); fi
  start=$SECONDS
  if ! run_logged "$main_log" cmake --build "$build_dir" -j "$jobs" "${target_args[@]}"; then
    fail "build failed (gpu_check.log)"
    exit 1
  fi
  note "build: ok in $((SECONDS - start)) s (${BUILD_TARGETS:-all targets})"
fi

# --- 3. Tests, none skipped --------------------------------------------------------------------
if [[ $steps == *,test,* ]]; then
  junit="$build_dir/ctest_junit.xml"
  rm -f "$junit"
  # shellcheck disable=SC2206
  ctest_extra=(${CTEST_ARGS:-})
  start=$SECONDS
  ctest_rc=0
  run_logged "$out/ctest.log" env GEMM_MLP_REQUIRE_GPU=1 GEMM_MLP_MNIST_DIR="$mnist_dir" \
    ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --output-junit "$junit" \
    "${ctest_extra[@]}" || ctest_rc=$?
  log "ctest exit status $ctest_rc after $((SECONDS - start)) s"
  if [ ! -s "$junit" ]; then
    fail "tests: ctest wrote no JUnit file (exit status $ctest_rc; see ctest.log)"
  else
    # Counts from the JUnit file: run (passed), failed, skipped; the failed and skipped names.
    counts=$(python3 "$repo/scripts/check/ctest_summary.py" --lines "$junit")
    read -r total passed failed skipped <<<"$(head -1 <<<"$counts")"
    note "tests: $total total, $passed passed, $failed failed, $skipped skipped"
    while read -r kind name; do
      if [ -n "${kind:-}" ]; then note "  $kind: $name"; fi
    done < <(tail -n +2 <<<"$counts" | head -40)
    allowed=0
    if ! mnist_present; then
      allowed=$(tail -n +2 <<<"$counts" | grep -c '^skipped RealMnist\.' || true)
      if [ "$allowed" -gt 0 ]; then
        note "  $allowed RealMnist.* skips allowed: MNIST is absent from $mnist_dir (run scripts/setup/fetch_mnist.sh)"
      fi
    fi
    if [ "$failed" -gt 0 ]; then fail "tests: $failed failed (ctest.log)"; fi
    if [ "$skipped" -gt "$allowed" ]; then fail "tests: $((skipped - allowed)) skipped on a GPU machine"; fi
    if [ "$total" -eq 0 ]; then fail "tests: none ran"; fi
    if [ "$ctest_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then fail "tests: ctest exit status $ctest_rc"; fi
  fi
fi

# --- 4. GEMM benchmark -------------------------------------------------------------------------
if [[ $steps == *,bench,* ]]; then
  bench="$build_dir/apps/gemm_bench/gemm_bench"
  if [ ! -x "$bench" ]; then
    fail "bench: $bench was not built"
  else
    # shellcheck disable=SC2206
    bench_extra=(${BENCH_ARGS:-})
    start=$SECONDS
    if run_logged "$main_log" "$bench" --csv "$out/gemm_bench.csv" \
        --json "$out/gemm_bench.json" "${bench_extra[@]}"; then
      note "bench: ok in $((SECONDS - start)) s (gemm_bench.csv, gemm_bench.json)"
    else
      fail "bench: gemm_bench failed after $((SECONDS - start)) s (gpu_check.log)"
    fi
    # The GEMMs of one training step of the default MLP (784-1024-1024-10, batch 256): forward NT,
    # input gradient NN, weight gradient TN.
    mlp_shapes=256x1024x784:NT,256x1024x1024:NT,256x10x1024:NT,256x1024x10:NN,256x1024x1024:NN
    mlp_shapes+=,256x784x1024:NN,10x1024x256:TN,1024x1024x256:TN,1024x784x256:TN
    start=$SECONDS
    if run_logged "$main_log" "$bench" --shapes "$mlp_shapes" --json "$out/mlp_shapes.json" \
        "${bench_extra[@]}"; then
      note "bench: MLP shapes ok in $((SECONDS - start)) s (mlp_shapes.json)"
    else
      fail "bench: gemm_bench on the MLP shapes failed after $((SECONDS - start)) s (gpu_check.log)"
    fi
    # The same nine GEMMs of the wide model (784-4096-4096-10, batch 512), where the tensor-core
    # variants have room to run.
    wide_shapes=512x4096x784:NT,512x4096x4096:NT,512x10x4096:NT,512x4096x10:NN,512x4096x4096:NN
    wide_shapes+=,512x784x4096:NN,10x4096x512:TN,4096x4096x512:TN,4096x784x512:TN
    start=$SECONDS
    if run_logged "$main_log" "$bench" --shapes "$wide_shapes" --json "$out/mlp4096_shapes.json" \
        "${bench_extra[@]}"; then
      note "bench: wide-model shapes ok in $((SECONDS - start)) s (mlp4096_shapes.json)"
    else
      fail "bench: gemm_bench on the wide model's shapes failed after $((SECONDS - start)) s"
    fi
    # The rest of the `auto` table's shapes: the nine GEMMs of the small model (784-512-512-10,
    # batch 128) and the squares 1024..8192 in NT and TN (NN: the default run above). A kernel
    # whose 30 reps would take over 2 s at a shape (slower than 67 ms a run: naive, tiled and vec
    # at 8192³, 5× slower than tf32x3_fast there) is validated but not timed: it cannot be the
    # fastest. BENCH_ARGS's own --max-seconds-per-case or --skip-slow replace these.
    auto_shapes=128x512x784:NT,128x512x512:NT,128x10x512:NT,128x512x10:NN,128x512x512:NN
    auto_shapes+=,128x784x512:NN,10x512x128:TN,512x512x128:TN,512x784x128:TN
    for layout in NT TN; do
      for size in 1024 2048 4096 8192; do auto_shapes+=,${size}x${size}x${size}:$layout; done
    done
    auto_limits=()
    [[ " ${BENCH_ARGS:-} " == *" --max-seconds-per-case"* ]] || auto_limits+=(--max-seconds-per-case 2)
    [[ " ${BENCH_ARGS:-} " == *" --skip-slow"* ]] || auto_limits+=(--skip-slow)
    start=$SECONDS
    if run_logged "$main_log" "$bench" --shapes "$auto_shapes" --json "$out/auto_shapes.json" \
        "${auto_limits[@]}" "${bench_extra[@]}"; then
      note "bench: small-model shapes and NT/TN squares ok in $((SECONDS - start)) s (auto_shapes.json)"
    else
      fail "bench: gemm_bench on the small model's shapes and the NT/TN squares failed after $((SECONDS - start)) s"
    fi
    # The `auto` table from the four runs: per shape and layout, the fastest correct fp32 kernel of
    # this project (a shape measured twice takes the later run's results).
    auto_runs=$out/gemm_bench.json,$out/mlp_shapes.json,$out/mlp4096_shapes.json,$out/auto_shapes.json
    if run_logged "$main_log" "$bench" --from-json "$auto_runs" --auto-table "$out/auto_table.inc"; then
      note "bench: auto_table.inc written from the four runs ($(grep -c '^{' "$out/auto_table.inc") shapes)"
    else
      fail "bench: the auto table could not be written from the four runs (gpu_check.log)"
    fi
  fi
fi

# --- 4b. compute-sanitizer over every device variant ------------------------------------------
if [[ $steps == *,sanitize,* ]]; then
  start=$SECONDS
  if run_logged "$main_log" "$repo/scripts/check/sanitize.sh" "$build_dir" "$out"; then
    note "sanitize: ok in $((SECONDS - start)) s, every variant and tool 0 errors (sanitizers.csv)"
  else
    fail "sanitize: errors or a failed run after $((SECONDS - start)) s (sanitizers.csv, sanitizers.log)"
  fi
fi

# --- 5. Short training comparison --------------------------------------------------------------
if [[ $steps == *,train,* ]]; then
  train="$build_dir/apps/train_mlp/train_mlp"
  if [ ! -x "$train" ]; then
    note "train: skipped, $train was not built"
  elif ! mnist_present; then
    note "train: skipped, MNIST is absent from $mnist_dir (run scripts/setup/fetch_mnist.sh)"
  else
    for mode in graph nograph; do
      results=$out/train_compare.csv
      mode_args=()
      if [ "$mode" = nograph ]; then
        results=$out/train_compare_nograph.csv
        mode_args=(--no-graph)
      fi
      start=$SECONDS
      if run_logged "$main_log" "$train" --compare "${TRAIN_COMPARE:-tf32,wgmma,wgmma_ws,tf32_fast,cublas_tf32}" \
          --epochs "${TRAIN_EPOCHS:-2}" --data-dir "$mnist_dir" --results "$results" "${mode_args[@]}"; then
        note "train ($mode): ok in $((SECONDS - start)) s ($(basename "$results"))"
      else
        fail "train ($mode): train_mlp --compare failed (gpu_check.log)"
      fi
    done
  fi
fi

# --- 5b. Production at widths and batches no standard model uses ------------------------------
if [[ $steps == *,odd,* ]]; then
  train="$build_dir/apps/train_mlp/train_mlp"
  if [ ! -x "$train" ]; then
    note "odd: skipped, $train was not built"
  elif ! mnist_present; then
    note "odd: skipped, MNIST is absent from $mnist_dir (run scripts/setup/fetch_mnist.sh)"
  else
    # shellcheck disable=SC2206
    odd_extra=(${ODD_ARGS:-})
    start=$SECONDS
    if run_logged "$main_log" env PYTHONUNBUFFERED=1 python3 "$repo/scripts/check/odd_widths.py" \
        --train-mlp "$train" --data-dir "$mnist_dir" --csv "$out/odd_widths.csv" "${odd_extra[@]}"; then
      note "odd: ok in $((SECONDS - start)) s, every production rule holds (odd_widths.csv)"
    else
      fail "odd: a rule or a run failed after $((SECONDS - start)) s (odd_widths.csv, gpu_check.log)"
    fi
  fi
fi

# --- 6. Beside PyTorch -------------------------------------------------------------------------
if [[ $steps == *,vs,* ]]; then
  if ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    note "vs: skipped, no PyTorch with CUDA here"
  elif ! mnist_present; then
    note "vs: skipped, MNIST is absent from $mnist_dir"
  else
    # shellcheck disable=SC2206
    vs_extra=(${VS_ARGS:-})
    start=$SECONDS
    if run_logged "$main_log" env PYTHONUNBUFFERED=1 python3 "$repo/scripts/pytorch/vs_pytorch.py" \
        --data-dir "$mnist_dir" --train-mlp "$build_dir/apps/train_mlp/train_mlp" \
        --csv "$out/vs_pytorch.csv" "${vs_extra[@]}"; then
      note "vs: ok in $((SECONDS - start)) s (vs_pytorch.csv)"
      # The step's floor beside each epoch time; the L2 size comes from the bench step's JSON.
      if [ ! -f "$out/gemm_bench.json" ]; then
        note "vs: roofline.csv skipped, the bench step wrote no gemm_bench.json"
      elif run_logged "$main_log" python3 "$repo/scripts/docs/roofline.py" --results "$out"; then
        note "vs: roofline.csv written"
      else
        fail "vs: scripts/docs/roofline.py failed (gpu_check.log)"
      fi
    else
      fail "vs: scripts/pytorch/vs_pytorch.py failed after $((SECONDS - start)) s (gpu_check.log)"
    fi
    # Checkpoints both ways: PyTorch loads ours, train_mlp --eval reads PyTorch's.
    if run_logged "$main_log" env PYTHONUNBUFFERED=1 python3 "$repo/scripts/pytorch/torch_roundtrip.py" \
        --data-dir "$mnist_dir" --train-mlp "$build_dir/apps/train_mlp/train_mlp"; then
      note "vs: checkpoint round trip with PyTorch ok"
    else
      fail "vs: scripts/pytorch/torch_roundtrip.py failed (gpu_check.log)"
    fi
  fi
fi

# --- 7. The step's critical path --------------------------------------------------------------
if [[ $steps == *,path,* ]]; then
  train="$build_dir/apps/train_mlp/train_mlp"
  ncu_bin=$(command -v ncu || true)
  if [ -z "$ncu_bin" ] && [ -x /usr/local/cuda/bin/ncu ]; then ncu_bin=/usr/local/cuda/bin/ncu; fi
  if [ ! -x "$train" ]; then
    note "path: skipped, $train was not built"
  elif ! mnist_present; then
    note "path: skipped, MNIST is absent from $mnist_dir"
  elif [ -z "$ncu_bin" ]; then
    fail "path: ncu (Nsight Compute) is neither on PATH nor at /usr/local/cuda/bin/ncu"
  else
    # shellcheck disable=SC2206
    path_extra=(${CRITICAL_PATH_ARGS:-})
    start=$SECONDS
    if run_logged "$main_log" python3 "$repo/scripts/check/critical_path.py" \
        --train-mlp "$train" --ncu "$ncu_bin" --variant tf32_fast,tf32x3_fast \
        --hidden 1024,1024 --batch 256 --data-dir "$mnist_dir" --csv "$out/critical_path.csv" \
        "${path_extra[@]}"; then
      note "path: ok in $((SECONDS - start)) s (critical_path.csv)"
    else
      fail "path: scripts/check/critical_path.py failed after $((SECONDS - start)) s (gpu_check.log)"
    fi
  fi
fi

exit "$overall"
