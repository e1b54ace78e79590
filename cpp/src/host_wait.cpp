// See tinytorch/host_wait.h.
#include "tinytorch/host_wait.h"
#include <atomic>

namespace tt {
namespace {
std::atomic<void* (*)()> g_release{nullptr};
std::atomic<void (*)(void*)> g_reacquire{nullptr};
}  // namespace

void set_host_wait_hooks(HostWaitHooks hooks) {
  g_reacquire.store(hooks.reacquire);
  g_release.store(hooks.release);
}

HostWait::HostWait() {
  if (auto release = g_release.load()) state_ = release();
}

HostWait::~HostWait() {
  if (state_)
    if (auto reacquire = g_reacquire.load()) reacquire(state_);
}

}  // namespace tt
