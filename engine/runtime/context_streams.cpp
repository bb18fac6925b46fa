// engine::Context's side streams (context.h): Branches, fork and join, work queued on a branch.
#include <string>

#include "base/cuda_check.h"
#include "engine/runtime/context.h"

namespace engine {

Context::Branches::Branches(Context& ctx) : ctx_(ctx) {
  if (ctx.branches_open_) throw Error("context: Branches inside Branches");
  ctx.branches_open_ = true;
  ctx.next_side_ = 0;  // the same side streams in every step: their workspaces already exist
}

Context::Branches::~Branches() {
  try {
    ctx_.join();
  } catch (...) {  // a destructor must not throw; the error stays for the next checked call
  }
  ctx_.branches_open_ = false;
  ctx_.current_ = 0;
}

int Context::fork() {
  if (!branches_open_ || !is_cuda()) return 0;
  const int side = next_side_;
  next_side_ = (next_side_ + 1) % kSideStreams;
  CUDA_CHECK(cudaEventRecord(fork_mark_, stream()));
  CUDA_CHECK(cudaStreamWaitEvent(side_streams_[side], fork_mark_, 0));
  forked_ |= 1u << side;
  return side + 1;
}

int Context::fork_after_all() {
  const unsigned earlier = forked_;
  const int side = fork();
  if (side == 0) return 0;
  for (int s = 0; s < kSideStreams; ++s) {
    if (!(earlier & (1u << s)) || s == side - 1) continue;
    CUDA_CHECK(cudaEventRecord(side_marks_[s], side_streams_[s]));
    CUDA_CHECK(cudaStreamWaitEvent(side_streams_[side - 1], side_marks_[s], 0));
  }
  return side;
}

void Context::follow_main(int side) {
  if (side == 0) return;
  if (!forked(side))
    throw Error("context: follow_main(" + std::to_string(side) + ") of a stream not forked");
  CUDA_CHECK(cudaEventRecord(fork_mark_, stream_));
  CUDA_CHECK(cudaStreamWaitEvent(side_streams_[side - 1], fork_mark_, 0));
}

void Context::on(int side, const std::function<void()>& work) {
  if (!forked(side))
    throw Error("context: on(" + std::to_string(side) + ") of a stream not forked");
  const int outer = current_;
  current_ = side;
  try {
    work();
  } catch (...) {
    current_ = outer;
    throw;
  }
  current_ = outer;
}

void Context::join() {
  for (int s = 0; s < kSideStreams; ++s) {
    if (!(forked_ & (1u << s))) continue;
    CUDA_CHECK(cudaEventRecord(side_marks_[s], side_streams_[s]));
    CUDA_CHECK(cudaStreamWaitEvent(stream_, side_marks_[s], 0));
  }
  forked_ = 0;
}

}  // namespace engine
