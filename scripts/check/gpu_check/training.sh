# shellcheck shell=bash
# Sourced by scripts/check/gpu_check.sh: steps 5 to 7, train_mlp's short comparison, production
# at odd widths, the comparison and checkpoint round trip with PyTorch, and the step's critical
# path.

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
    # Checkpoints both ways: PyTorch loads ours, train_mlp --eval reads PyTorch's. Both programs
    # from this check's build (BUILD_DIR), not the script's default build-gpu.
    if run_logged "$main_log" env PYTHONUNBUFFERED=1 python3 "$repo/scripts/pytorch/torch_roundtrip.py" \
        --data-dir "$mnist_dir" --train-mlp "$build_dir/apps/train_mlp/train_mlp" \
        --predict "$build_dir/apps/predict/predict"; then
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
