// The switch of programmatic dependent launch (launch.cuh), host side. gemm.h re-exports it.
#pragma once

namespace gemm {

// Programmatic dependent launch: on compute capability 9.0 and newer, the production kernels
// (kernels/fast/, the variants `fast`, `tf32_fast`, `tf32x3_fast` and what `auto` picks of them),
// the split-K reduction and the engine's kernels start while the kernel before them on their
// stream finishes, and wait inside for its results. On by default; off launches them in plain
// stream order (to measure what it gains: train_mlp --no-dependent-launch). Process-wide; set it
// between launches, not while another thread launches.
void set_dependent_launch(bool on);
bool dependent_launch();

// Whether launch_kernel launches dependently: the switch is on and the current device has
// compute capability 9.0 or newer.
bool dependent_launch_active();

namespace detail {
// Whether the current device has compute capability 9.0 or newer (Hopper's clusters and
// dependent launch).
bool compute_capability_9_or_newer();
}  // namespace detail

}  // namespace gemm
