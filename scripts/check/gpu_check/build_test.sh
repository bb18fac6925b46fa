# shellcheck shell=bash
# Sourced by scripts/check/gpu_check.sh: steps 1 to 3, a GPU or stop, the configure and build,
# and every test with none skipped.

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
    junit_counts "$junit"
    allowed=0
    if ! mnist_present; then
      allowed=$(tail -n +2 <<<"$counts" | grep -c '^skipped RealMnist\.' || true)
      if [ "$allowed" -gt 0 ]; then
        note "  $allowed RealMnist.* skips allowed: MNIST is absent from $mnist_dir (run scripts/setup/fetch_mnist.sh)"
      fi
    fi
    # The torch op's suites skip where the configure found no suitable PyTorch (its
    # "gemm_mlp: the PyTorch op" line says why); scripts/pytorch/torch_op_check.sh runs them.
    if [ ! -e "$build_dir/pytorch/libgemm_mlp_torch_ops.so" ]; then
      torch_skips=$(tail -n +2 <<<"$counts" | grep -c '^skipped PyTorch\.' || true)
      if [ "$torch_skips" -gt 0 ]; then
        note "  $torch_skips PyTorch.* skips allowed: the torch op is not built (no suitable PyTorch at configure)"
        allowed=$((allowed + torch_skips))
      fi
    fi
    if [ "$failed" -gt 0 ]; then fail "tests: $failed failed (ctest.log)"; fi
    if [ "$skipped" -gt "$allowed" ]; then fail "tests: $((skipped - allowed)) skipped on a GPU machine"; fi
    if [ "$total" -eq 0 ]; then fail "tests: none ran"; fi
    if [ "$ctest_rc" -ne 0 ] && [ "$failed" -eq 0 ]; then fail "tests: ctest exit status $ctest_rc"; fi
  fi
fi
