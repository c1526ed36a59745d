#include "backend/mock_device_backend.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <tuple>
#include <vector>

#include "backends/cpu/cpu_executor.h"
#include "kernels/kernel_table.h"

namespace encrt::conformance {

namespace {

std::atomic<int> g_runs{0}, g_captures{0}, g_replays{0}, g_copies_in{0}, g_copies_out{0}, g_expansions{0};

struct Mapping {
  void* base;
  size_t bytes;
};

struct MockContext {
  const kernels::KernelTable* kernels = nullptr;
  std::unique_ptr<cpu::ThreadPool> pool;
  std::vector<Mapping> mappings;  // its device memory
  std::set<std::tuple<int, int, int, int>> captured;  // (first op, count, batch, seq)
  int fail_after = -1;  // option fail_run_after: run() fails once it has run this many segments
  bool pooling = false;  // option pooling=on: it also runs the pooling ops (the hidden state stays in its memory)
  // Options for the tuner's tests (its tuning table below): delay_us=N sleeps N µs in every
  // segment it runs (a slow kernel); corrupt=on skips that sleep and negates the first row of every
  // LayerNorm's output (a fast kernel with wrong answers).
  // path=b (a second build of the kernels) costs 1000 µs more and 1.5 times the delay, or with
  // path_boost=on (an option of that build only) a quarter of it: slower alone, faster with its
  // dependent, for the tuner's search of dependent options.
  long delay_us = 0;
  bool corrupt = false;
  bool path_b = false, path_boost = false;
  int segments_run = 0;
};

MockContext& mock(void* c) { return *static_cast<MockContext*>(c); }

// The device memory is readable and writable only inside the backend's own calls.
class Unlocked {
 public:
  explicit Unlocked(MockContext& c) : c_(c) { protect(PROT_READ | PROT_WRITE); }
  ~Unlocked() { protect(PROT_NONE); }

 private:
  void protect(int prot) {
    for (const Mapping& m : c_.mappings) mprotect(m.base, m.bytes, prot);
  }
  MockContext& c_;
};

Status create(const backend::Options& options, int, void** out) {
  auto c = std::make_unique<MockContext>();
  c->kernels = kernels::preset_kernel_table(*kernels::find_isa_level("scalar"));
  if (auto it = options.find("fail_run_after"); it != options.end()) {
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || v < 0)
      return invalid_argument("option fail_run_after of backend mock_device must be a count, got '" + it->second + "'");
    c->fail_after = static_cast<int>(v);
  }
  if (auto it = options.find("pooling"); it != options.end()) {
    if (it->second != "on" && it->second != "off")
      return invalid_argument("option pooling of backend mock_device must be on or off, got '" + it->second + "'");
    c->pooling = it->second == "on";
  }
  if (auto it = options.find("delay_us"); it != options.end()) {
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || v < 0 || v > 1000000)
      return invalid_argument("option delay_us of backend mock_device must be a count up to 1000000, got '" +
                              it->second + "'");
    c->delay_us = v;
  }
  for (const auto& [key, yes, no, flag] : {std::tuple{"path", "b", "a", &c->path_b}, std::tuple{"path_boost", "on", "off", &c->path_boost}})
    if (auto it = options.find(key); it != options.end()) {
      if (it->second != yes && it->second != no)
        return invalid_argument(std::string("option ") + key + " of backend mock_device must be " + no + " or " + yes +
                                ", got '" + it->second + "'");
      *flag = it->second == yes;
    }
  if (auto it = options.find("corrupt"); it != options.end()) {
    if (it->second != "on" && it->second != "off")
      return invalid_argument("option corrupt of backend mock_device must be on or off, got '" + it->second + "'");
    c->corrupt = it->second == "on";
  }
  c->pool = std::make_unique<cpu::ThreadPool>(1);
  *out = c.release();
  return Status::ok();
}

void destroy(void* c) {
  for (const Mapping& m : mock(c).mappings) munmap(m.base, m.bytes);
  delete static_cast<MockContext*>(c);
}

bool supports(const void* cv, const plan::Graph&, const plan::Op& op) {
  switch (op.kind) {
    case plan::OpKind::kPoolMean:
    case plan::OpKind::kPoolFirst:
      return static_cast<const MockContext*>(cv)->pooling;
    case plan::OpKind::kLayerNorm:
    case plan::OpKind::kTanh:
    case plan::OpKind::kCopy:
      return true;
    case plan::OpKind::kLinear:
      return op.p<plan::LinearParams>().weights->dtype != DType::kI8;
    default:
      return false;
  }
}

size_t scratch_bytes(const void*, const plan::Graph&, const plan::Op&, backend::Shape) { return 0; }

Status prepare(void*, const backend::PrepareArgs& args, backend::HeldBytes* held) {
  for (int i = 0; i < args.op_count; ++i) {
    const plan::Op& op = args.graph->ops[static_cast<size_t>(args.ops[i])];
    if (op.kind == plan::OpKind::kLinear) held->weights_in_place += op.p<plan::LinearParams>().weights->packed_bytes;
  }
  return Status::ok();
}

void copy_op(const backend::RunArgs& args, const plan::Op& op) {
  const void* src = args.buffers[static_cast<size_t>(op.in(0))];
  void* dst = args.buffers[static_cast<size_t>(op.out(0))];
  if (!src || !dst) return;  // an absent optional input: its mirror is absent too
  const plan::CopyParams& p = op.p<plan::CopyParams>();
  (p.to_memory != plan::kHostMemory ? g_copies_in : g_copies_out).fetch_add(1);
  const int from = op.in(0);
  std::memcpy(dst, src, plan::rows_in_run(*args.graph, from, args.shape.batch, args.shape.seq, args.packed) *
                            args.graph->buffers[static_cast<size_t>(from)].row_bytes);
}

Status run(void* cv, const backend::RunArgs& args) {
  MockContext& c = mock(cv);
  if (c.fail_after >= 0 && c.segments_run >= c.fail_after)
    return internal_error("mock_device: simulated device failure after " + std::to_string(c.segments_run) + " segments");
  ++c.segments_run;
  g_runs.fetch_add(1);
  Unlocked unlocked(c);
  for (int i = 0; i < args.op_count; ++i) {
    const plan::Op& op = args.graph->ops[static_cast<size_t>(args.ops[i])];
    if (op.kind == plan::OpKind::kCopy)
      copy_op(args, op);
    else
      cpu::execute_op(*c.kernels, *c.pool, args, args.ops[i]);
    if (c.corrupt && op.kind == plan::OpKind::kLayerNorm) {
      float* y = static_cast<float*>(args.buffers[static_cast<size_t>(op.out(0))]);
      const size_t width = args.graph->buffers[static_cast<size_t>(op.out(0))].row_bytes / sizeof(float);
      for (size_t k = 0; k < width; ++k) y[k] = -y[k];
    }
  }
  const long delay = !c.path_b ? c.delay_us : 1000 + (c.path_boost ? c.delay_us / 4 : c.delay_us * 3 / 2);
  if (delay > 0 && !c.corrupt) std::this_thread::sleep_for(std::chrono::microseconds(delay));
  return Status::ok();
}

std::string implementation(const void*, const plan::Graph&, const plan::Op& op) {
  return op.kind == plan::OpKind::kCopy ? "memcpy" : "reference kernels";
}

std::string summary(const void*) { return "mock device (reference kernels in PROT_NONE memory)"; }

Status alloc_arena(void* cv, size_t bytes, void** arena) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t size = (bytes + page - 1) / page * page;
  void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return out_of_memory("mock_device: cannot map " + std::to_string(size) + " bytes");
  mock(cv).mappings.push_back({p, size});
  *arena = p;
  return Status::ok();
}

void free_arena(void* cv, void* arena) {
  auto& maps = mock(cv).mappings;
  for (size_t i = 0; i < maps.size(); ++i) {
    if (maps[i].base != arena) continue;
    munmap(maps[i].base, maps[i].bytes);
    maps.erase(maps.begin() + static_cast<long>(i));
    return;
  }
}

Status copy_to_host(void* cv, void* dst, const void* src, size_t bytes) {
  Unlocked unlocked(mock(cv));
  g_copies_out.fetch_add(1);
  std::memcpy(dst, src, bytes);
  return Status::ok();
}

Status copy_from_host(void* cv, void* dst, const void* src, size_t bytes) {
  Unlocked unlocked(mock(cv));
  g_copies_in.fetch_add(1);
  std::memcpy(dst, src, bytes);
  return Status::ok();
}

std::tuple<int, int, int, int> key(const backend::RunArgs& args) {
  return {args.ops[0], args.op_count, args.shape.batch, args.shape.seq};
}

Status replay(void* cv, const backend::RunArgs& args, bool* replayed) {
  *replayed = mock(cv).captured.count(key(args)) > 0;
  if (!*replayed) return Status::ok();
  g_replays.fetch_add(1);
  return run(cv, args);
}

Status capture(void* cv, const backend::RunArgs& args) {
  g_captures.fetch_add(1);
  if (Status s = run(cv, args); !s) return s;
  mock(cv).captured.insert(key(args));
  return Status::ok();
}

// Its ops are encrt's reference kernels, which run packed as the CPU backend does.
bool supports_packed(const void* c, const plan::Graph& g, const plan::Op& op) { return supports(c, g, op); }

// The seam's contract for token-level outputs in device memory, kept in that memory: expanded in
// place (a device backend does it with its own kernels; here, the host's expand_rows).
Status expand_packed(void* cv, const backend::RunArgs& args, int buffer) {
  if (!args.packed) return internal_error("mock_device: expand_packed after a padded run");
  Unlocked unlocked(mock(cv));
  g_expansions.fetch_add(1);
  plan::expand_rows(*args.packed, args.shape.batch, args.shape.seq, args.graph->buffers[static_cast<size_t>(buffer)].row_bytes,
                    args.buffers[static_cast<size_t>(buffer)]);
  return Status::ok();
}

const char* const kOptionKeys[] = {"fail_run_after", "pooling", "delay_us", "corrupt", "path", "path_boost", nullptr};
// corrupt=on: faster than any delay but wrong, so the tuner must reject it; then delay_us,
// whose default (0) is faster than a test's base delay, and a value the backend refuses.
// fail_run_after=2 is created but fails in its warm-up runs (a device error after creation).
const char* const kCorruptValues[] = {"off", "on", nullptr};
const char* const kFailValues[] = {"never", "2", nullptr};
const char* const kDelayValues[] = {"0", "2000", "-1", nullptr};
// path=b first (slower alone, faster with path_boost=on, which is tried only with it).
const char* const kPathValues[] = {"a", "b", nullptr};
const char* const kBoostValues[] = {"off", "on", nullptr};
const char* const kWhereB[] = {"b", nullptr};
const backend::TuningChoice kTuning[] = {{"path", kPathValues},
                                         {"path_boost", kBoostValues, "path", kWhereB},
                                         {"corrupt", kCorruptValues},
                                         {"fail_run_after", kFailValues},
                                         {"delay_us", kDelayValues},
                                         {nullptr, nullptr}};

}  // namespace

MockDeviceCounters mock_device_counters() {
  return {g_runs.load(), g_captures.load(), g_replays.load(), g_copies_in.load(), g_copies_out.load(), g_expansions.load()};
}

const backend::BackendInterface kMockDeviceBackend = {
    /*name=*/"mock_device",
    /*memory=*/backend::MemoryKind::kDevice,
    /*arena_alignment=*/256,
    /*read_overrun=*/0,
    /*option_keys=*/kOptionKeys,
    create,
    destroy,
    supports,
    scratch_bytes,
    prepare,
    run,
    implementation,
    summary,
    /*available=*/nullptr,
    alloc_arena,
    free_arena,
    copy_to_host,
    copy_from_host,
    /*synchronize=*/nullptr,
    replay,
    capture,
    /*run_profiled=*/nullptr,
    /*storage_dtype=*/nullptr,
    /*last_device_ms=*/nullptr,
    supports_packed,
    expand_packed,
    /*dequantizes_int8_linears=*/nullptr,
    /*tuning=*/kTuning,
};

}  // namespace encrt::conformance
