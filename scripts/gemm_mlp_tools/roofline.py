"""The floor of an MLP training step on the H200, beside the measured epoch times.

A step of a model with layer sizes s0-s1-...-sL at batch B does, in multiply-adds counted twice:
  forward        2·B·Σ s_i·s_{i+1}                  (every layer)
  weight grads   2·B·Σ s_i·s_{i+1}                  (every layer)
  input grads    2·B·Σ s_i·s_{i+1} over layers 2..L (the first layer's input needs none)
and moves at least, in fp32:
  the optimiser  20 bytes per parameter (SGD with momentum reads w, g, v and writes w, v)
  the GEMMs      A, B and C of each of its GEMMs once
The floor of a step is the larger of its FLOPs at the precision's peak and, where parameters,
gradients and momentum do not fit in L2, its bytes at HBM bandwidth (in L2 no published bandwidth
bounds it). Peaks, from NVIDIA's H200 datasheet: TF32 tensor cores 989 TFLOP/s with sparsity,
494.5 dense; HBM3e 4.8 TB/s. fp32 accuracy on this chip is fastest as 3×TF32 (three TF32
products, steps 10–11), so its floor is a third of the TF32 peak. An epoch is ceil(60000 / B)
steps (MNIST's training set; the last batch is partial).
"""
import math

MNIST_TRAIN_IMAGES = 60000
TF32_DENSE_TFLOPS = 494.5  # H200 datasheet: 989 TFLOP/s with 2:4 sparsity
HBM_TBPS = 4.8  # H200 datasheet
PEAK_TFLOPS = {"tf32": TF32_DENSE_TFLOPS, "fp32": TF32_DENSE_TFLOPS / 3}


def layer_pairs(sizes):
    return list(zip(sizes[:-1], sizes[1:]))


def step_flops(sizes, batch):
    """FLOPs of one training step's GEMMs (forward, weight and input gradients)."""
    pairs = layer_pairs(sizes)
    forward = sum(2 * batch * i * o for i, o in pairs)
    input_grads = sum(2 * batch * i * o for i, o in pairs[1:])
    return 2 * forward + input_grads


def parameter_count(sizes):
    return sum(i * o + o for i, o in layer_pairs(sizes))


def step_bytes(sizes, batch):
    """Bytes a step must move at least: the optimiser's pass and each GEMM's operands once."""
    gemm_floats = 0
    for layer, (i, o) in enumerate(layer_pairs(sizes)):
        gemm_floats += batch * i + i * o + batch * o  # forward: X, W, Y
        gemm_floats += batch * o + batch * i + i * o  # weight gradient: dY, X, dW
        if layer > 0:
            gemm_floats += batch * o + i * o + batch * i  # input gradient: dY, W, dX
    return 20 * parameter_count(sizes) + 4 * gemm_floats


def steps_per_epoch(batch):
    return math.ceil(MNIST_TRAIN_IMAGES / batch)


def floor(sizes, batch, precision, l2_bytes):
    """{'gflop', 'mbytes', 'compute_us', 'memory_us', 'floor_s_per_epoch'} of one model."""
    flops, nbytes = step_flops(sizes, batch), step_bytes(sizes, batch)
    compute_us = flops / (PEAK_TFLOPS[precision] * 1e12) * 1e6
    resident = 12 * parameter_count(sizes) <= l2_bytes  # w, g and v stay in L2
    memory_us = 0.0 if resident else nbytes / (HBM_TBPS * 1e12) * 1e6
    step_us = max(compute_us, memory_us)
    return {"gflop": flops / 1e9, "mbytes": nbytes / 1e6, "compute_us": compute_us,
            "memory_us": memory_us, "floor_s_per_epoch": step_us * steps_per_epoch(batch) / 1e6}
