// The thread's launch mode (launch.cuh, dependent_launch.cuh).
#include "backends/cuda/kernels/cuda_kernels.h"

namespace encrt::cuda {

namespace {
bool& flag() {
  thread_local bool on = false;
  return on;
}
}  // namespace

bool dependent_launch() { return flag(); }

DependentLaunchScope::DependentLaunchScope(bool on) : saved_(flag()) { flag() = on; }
DependentLaunchScope::~DependentLaunchScope() { flag() = saved_; }

}  // namespace encrt::cuda
