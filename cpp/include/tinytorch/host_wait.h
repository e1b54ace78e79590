#pragma once
// A region where the calling host thread blocks on something outside this process, e.g. a
// device-to-host copy waiting behind an NCCL collective that waits for a peer. The peer may first
// need this process's Python threads (the TCPStore server answers from one), so such waits must
// not hold Python's GIL. The core knows nothing of Python: tinytorch._C installs hooks that
// release and re-take the GIL; without hooks HostWait does nothing.
//
// Never open a HostWait while holding a lock that a Python thread may wait for with the GIL held
// (e.g. the CUDA allocator's mutex): that is a lock-order deadlock.
namespace tt {

struct HostWaitHooks {
  void* (*release)() = nullptr;          // returns state for reacquire (nullptr: nothing released)
  void (*reacquire)(void* state) = nullptr;
};

void set_host_wait_hooks(HostWaitHooks hooks);

class HostWait {
 public:
  HostWait();
  ~HostWait();
  HostWait(const HostWait&) = delete;
  HostWait& operator=(const HostWait&) = delete;

 private:
  void* state_ = nullptr;
};

}  // namespace tt
