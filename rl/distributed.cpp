#include "rl/distributed.hpp"

#include <chrono>
#include <cstdlib>

#include <torch/torch.h>
#include <torch/version.h>

#ifdef SCHEDSIM_HAS_C10D
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef USE_C10D_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef USE_C10D_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#endif

#include "base/error.hpp"

namespace schedsim::rl {

#ifdef SCHEDSIM_HAS_C10D
namespace {
// LibTorch 2.x split ProcessGroup into a dispatcher and per-device Backends; Gloo and
// NCCL derive from Backend there and from ProcessGroup in 1.x. The collectives used here
// (allreduce, barrier) are spelled the same on both.
#if TORCH_VERSION_MAJOR >= 2
using Group = c10d::Backend;
#else
using Group = c10d::ProcessGroup;
#endif

[[maybe_unused]] bool is_loopback(const std::string& addr) { return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1"; }

std::string message_of(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}
}  // namespace

struct Communicator::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<Group> group;
  std::string backend;
  torch::Device device{torch::kCPU};
};
#else
struct Communicator::Impl {};
#endif

Communicator::Communicator(const DistConfig& config, bool cuda, double timeout_s)
    : rank_(config.rank), world_size_(config.world_size), timeout_s_(timeout_s) {
  if (world_size_ <= 1) return;
#ifdef SCHEDSIM_HAS_C10D
#ifndef USE_C10D_GLOO
  if (!cuda)
    throw InputError("WORLD_SIZE=" + std::to_string(world_size_),
                     "this build's distributed training has NCCL only (LibTorch's Gloo headers were not found at configure time): "
                     "use train.device: cuda, or install libgloo-dev and reconfigure");
#endif
  impl_ = std::make_unique<Impl>();
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000.0));
  try {
    c10d::TCPStoreOptions opts;
    opts.port = static_cast<std::uint16_t>(config.master_port);
    opts.isServer = rank_ == 0;
    opts.numWorkers = static_cast<std::size_t>(world_size_);
    opts.waitWorkers = true;
    opts.timeout = timeout;
    impl_->store = c10::make_intrusive<c10d::TCPStore>(config.master_addr, opts);
#ifdef USE_C10D_NCCL
    if (cuda) {
      auto o = c10d::ProcessGroupNCCL::Options::create();
      o->timeout = timeout;
      impl_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(impl_->store, rank_, world_size_, o);
      impl_->backend = "nccl";
      impl_->device = torch::Device(torch::kCUDA, config.local_rank % std::max<int>(1, static_cast<int>(torch::cuda::device_count())));
      return;
    }
#else
    (void)cuda;  // Gloo moves CUDA tensors through host memory
#endif
#ifdef USE_C10D_GLOO
    auto o = c10d::ProcessGroupGloo::Options::create(timeout);
    // Bind to the interface GLOO_SOCKET_IFNAME names (as PyTorch does), to loopback for a
    // one-machine run, else to the address this host's name resolves to.
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
      o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    else if (is_loopback(config.master_addr))
      o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    else
      o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    o->threads = 1;  // one collective is in flight at a time
    impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(impl_->store, rank_, world_size_, o);
    impl_->backend = "gloo";
#endif
  } catch (const std::exception& e) {
    throw Error("rank " + std::to_string(rank_) + " of " + std::to_string(world_size_) + ": cannot join the process group at " +
                config.master_addr + ":" + std::to_string(config.master_port) + " within train.dist_timeout_s = " +
                std::to_string(static_cast<long>(timeout_s)) + " s (are all ranks started, with the same MASTER_ADDR/MASTER_PORT?): " +
                message_of(e));
  }
#else
  (void)cuda;
  throw InputError("WORLD_SIZE=" + std::to_string(world_size_),
                   "this build has no distributed training (LibTorch's c10d with Gloo headers were not found at configure time; on "
                   "Debian install libgloo-dev and reconfigure)");
#endif
}

Communicator::~Communicator() = default;

std::string Communicator::backend() const {
#ifdef SCHEDSIM_HAS_C10D
  if (impl_) return impl_->backend;
#endif
  return "none";
}

void Communicator::fail(const char* what, const std::exception& e) const {
#ifdef SCHEDSIM_HAS_C10D
  const std::string msg = message_of(e);
#else
  const std::string msg = e.what();
#endif
  throw Error("rank " + std::to_string(rank_) + " of " + std::to_string(world_size_) + ": " + what +
              " failed: another rank has probably died or stalled for longer than train.dist_timeout_s = " +
              std::to_string(static_cast<long>(timeout_s_)) + " s (" + msg + ")");
}

void Communicator::allreduce_sum(std::vector<at::Tensor>& tensors) {
  if (world_size_ <= 1 || tensors.empty()) return;
#ifdef SCHEDSIM_HAS_C10D
  std::vector<torch::Tensor> flat_parts;
  for (const auto& t : tensors) flat_parts.push_back(t.detach().reshape({-1}).to(impl_->device));
  std::vector<torch::Tensor> buffer{torch::cat(flat_parts)};
  try {
    impl_->group->allreduce(buffer)->wait();
  } catch (const std::exception& e) {
    fail("all-reduce", e);
  }
  std::int64_t offset = 0;
  torch::NoGradGuard guard;
  for (auto& t : tensors) {
    const auto n = t.numel();
    t.copy_(buffer[0].slice(0, offset, offset + n).view(t.sizes()));
    offset += n;
  }
#endif
}

void Communicator::allreduce_sum(std::vector<double>& values) {
  if (world_size_ <= 1 || values.empty()) return;
#ifdef SCHEDSIM_HAS_C10D
  std::vector<torch::Tensor> t{torch::tensor(values, torch::kFloat64)};
  allreduce_sum(t);
  auto cpu = t[0].cpu().contiguous();
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = cpu.data_ptr<double>()[i];
#endif
}

void Communicator::barrier() {
  if (world_size_ <= 1) return;
#ifdef SCHEDSIM_HAS_C10D
  try {
    impl_->group->barrier()->wait();
  } catch (const std::exception& e) {
    fail("barrier", e);
  }
#endif
}

bool distributed_available() {
#if defined(SCHEDSIM_HAS_C10D) && defined(USE_C10D_GLOO)
  return true;
#else
  return false;
#endif
}

}  // namespace schedsim::rl
