# shellcheck shell=bash
# Sourced by scripts/check/gpu_check.sh: steps 4 and 4b, the GEMM benchmarks with the `auto`
# table they make, and compute-sanitizer over every device variant.

# --- 4. GEMM benchmark -------------------------------------------------------------------------
if [[ $steps == *,bench,* ]]; then
  bench="$build_dir/apps/gemm_bench/gemm_bench"
  if [ ! -x "$bench" ]; then
    fail "bench: $bench was not built"
  else
    # shellcheck disable=SC2206
    bench_extra=(${BENCH_ARGS:-})
    start=$SECONDS
    # The squares flushed only: a training step's regime is its own shapes', timed warm below.
    if run_logged "$main_log" "$bench" --csv "$out/gemm_bench.csv" \
        --json "$out/gemm_bench.json" --warm-calls 0 "${bench_extra[@]}"; then
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

# --- 4a. The step's GEMMs warm, and where their time goes ---------------------------------------
if [[ $steps == *,phases,* ]]; then
  start=$SECONDS
  if run_logged "$main_log" env BUILD_DIR="$build_dir" "$repo/scripts/check/small_m.sh" "$out"; then
    note "phases: ok in $((SECONDS - start)) s (small_m.csv, small_m.json, phases.csv)"
  else
    fail "phases: scripts/check/small_m.sh failed after $((SECONDS - start)) s (gpu_check.log)"
  fi
fi

# --- 4b. compute-sanitizer over every device variant ------------------------------------------
if [[ $steps == *,sanitize,* ]]; then
  start=$SECONDS
  # shellcheck disable=SC2086  # SANITIZE_VARIANTS is a word list
  if run_logged "$main_log" "$repo/scripts/check/sanitize.sh" "$build_dir" "$out" ${SANITIZE_VARIANTS:-}; then
    note "sanitize: ok in $((SECONDS - start)) s, every variant and tool 0 errors (sanitizers.csv)"
  else
    fail "sanitize: errors or a failed run after $((SECONDS - start)) s (sanitizers.csv, sanitizers.log)"
  fi
fi
