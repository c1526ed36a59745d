#include "backends/xnnpack/xnnpack_backend.h"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "core/half.h"
#include "kernels/kernel_table.h"
#include "kernels/panel_unpack.h"
#include "kernels/ref/ref_kernels.h"
#include "plan/token_layout.h"

namespace encrt::xnnpack {

namespace {

// ---- XNNPACK's allocator: the same functions as its default one (so that memory it allocated
// before, or after another caller reinstalls the default, is freed correctly), counting the
// bytes a thread allocates while it creates operators (the packed weights) and every allocation.
thread_local size_t* t_counted_bytes = nullptr;
std::atomic<size_t> g_allocations{0};

void* counting_allocate(void*, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (t_counted_bytes) *t_counted_bytes += size;
  return std::malloc(size);
}
void* counting_reallocate(void*, void* pointer, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (t_counted_bytes) *t_counted_bytes += size;
  return std::realloc(pointer, size);
}
void counting_deallocate(void*, void* pointer) { std::free(pointer); }
void* counting_aligned_allocate(void*, size_t alignment, size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (t_counted_bytes) *t_counted_bytes += size;
  void* p = nullptr;
  return posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size) == 0 ? p : nullptr;
}
void counting_aligned_deallocate(void*, void* pointer) { std::free(pointer); }

const xnn_allocator kCountingAllocator = {nullptr, counting_allocate, counting_reallocate, counting_deallocate,
                                          counting_aligned_allocate, counting_aligned_deallocate};

// XNNPACK initialized once per process; whether this CPU runs its fp16 operators (probed).
struct Library {
  xnn_status status = xnn_status_uninitialized;
  bool fp16 = false;
};

const Library& library() {
  static const Library lib = [] {
    Library l;
    l.status = xnn_initialize(&kCountingAllocator);
    if (l.status != xnn_status_success) return l;
    const uint16_t w[4] = {0x3c00, 0x3c00, 0x3c00, 0x3c00};
    xnn_operator_t op = nullptr;
    l.fp16 = xnn_create_fully_connected_nc_f16(2, 2, 2, 2, w, nullptr, -INFINITY, INFINITY, 0, &op) == xnn_status_success;
    if (op) xnn_delete_operator(op);
    return l;
  }();
  return lib;
}

bool available(std::string* why_not) {
  const Library& l = library();
  if (l.status == xnn_status_success) return true;
  if (why_not) *why_not = "xnn_initialize failed (xnn_status " + std::to_string(static_cast<int>(l.status)) + ")";
  return false;
}

struct Linear {
  const detail::LinearView* weights = nullptr;
  int N = 0, K = 0;
  bool half = false;  // XNNPACK's fp16 operator (fp16=half), else its fp32 one
  xnn_operator_t fc = nullptr;
  xnn_operator_t to_half = nullptr;   // half: activations in
  xnn_operator_t to_float = nullptr;  // half: outputs back
  const float* bias = nullptr;        // half: added after the conversion back, in fp32
  kernels::Activation activation = kernels::Activation::kNone;
  bool clamp_relu = false;  // ReLU done by the fully connected operator's output clamp
};

// How fp16 weights run (option fp16): widened to fp32 once at prepare and run by
// xnn_fully_connected_nc_f32 (encrt's fp16 semantics: fp32 activations and sums), or by XNNPACK's
// own xnn_fully_connected_nc_f16 (activations and outputs rounded to half).
enum class Fp16Mode { kWiden, kHalf };

struct XnnContext {
  int threads = 1;
  Fp16Mode fp16 = Fp16Mode::kWiden;
  pthreadpool_t pool = nullptr;
  const kernels::KernelTable* kernels = nullptr;  // encrt's GELU for the epilogue
  std::vector<Linear> linears;
  std::vector<int> linear_of_op;  // graph op -> index in linears, or -1
  size_t packed_bytes = 0;

  ~XnnContext() {
    for (Linear& l : linears)
      for (xnn_operator_t op : {l.fc, l.to_half, l.to_float})
        if (op) xnn_delete_operator(op);
    if (pool) pthreadpool_destroy(pool);
  }
};

const XnnContext& ctx(const void* c) { return *static_cast<const XnnContext*>(c); }

Status xnn_error(const char* what, xnn_status s, const std::string& op) {
  return internal_error(std::string(what) + " failed for '" + op + "' (xnn_status " + std::to_string(static_cast<int>(s)) +
                        ")");
}

Status create(const backend::Options& options, int threads, void** out) {
  std::string why;
  if (!available(&why)) return unsupported("backend 'xnnpack' is not available on this machine: " + why);
  auto c = std::make_unique<XnnContext>();
  c->threads = threads;
  if (auto it = options.find("fp16"); it != options.end()) {
    if (it->second == "half") {
      c->fp16 = Fp16Mode::kHalf;
    } else if (it->second != "widen") {
      return invalid_argument("option fp16 of backend xnnpack must be widen or half, got '" + it->second + "'");
    }
  }
  c->kernels = &kernels::default_kernel_table();
  *out = c.release();
  return Status::ok();
}

void destroy(void* c) { delete static_cast<XnnContext*>(c); }

bool half(const void* c, const plan::Op& op) {
  return op.p<plan::LinearParams>().weights->dtype == DType::kF16 && ctx(c).fp16 == Fp16Mode::kHalf;
}

bool supports(const void* c, const plan::Graph&, const plan::Op& op) {
  if (op.kind != plan::OpKind::kLinear) return false;
  const DType d = op.p<plan::LinearParams>().weights->dtype;
  return d == DType::kF32 || (d == DType::kF16 && (!half(c, op) || library().fp16));
}

// A linear layer is row by row, so a packed run (only the real tokens' rows, plan/token_layout.h)
// is the same operator on fewer rows: every op this backend takes runs packed.
bool supports_packed(const void* c, const plan::Graph& g, const plan::Op& op) { return supports(c, g, op); }

// fp16: the activations in half [M, K] and the outputs in half [M, N], each padded for
// XNNPACK's reads past the end.
size_t half_rows_offset(const plan::Graph& g, const plan::Op& op, backend::Shape max) {
  const size_t rows = plan::rows_of(g.buffers[static_cast<size_t>(op.out(0))], max.batch, max.seq);
  const size_t K = static_cast<size_t>(op.p<plan::LinearParams>().weights->K);
  return (rows * K * sizeof(uint16_t) + XNN_EXTRA_BYTES + 63) / 64 * 64;
}

size_t scratch_bytes(const void* c, const plan::Graph& g, const plan::Op& op, backend::Shape max) {
  if (op.kind != plan::OpKind::kLinear || !half(c, op)) return 0;
  const size_t rows = plan::rows_of(g.buffers[static_cast<size_t>(op.out(0))], max.batch, max.seq);
  return half_rows_offset(g, op, max) + rows * static_cast<size_t>(op.p<plan::LinearParams>().weights->N) * sizeof(uint16_t);
}

// The packed PanelN16 weights back to row-major [N, K] (XNNPACK packs them its own way).
template <typename T>
std::vector<T> unpack_panel_n16(const detail::LinearView& w) {
  std::vector<T> out(static_cast<size_t>(w.N) * w.K);
  kernels::unpack_panel_n16(w.N, w.K, static_cast<const T*>(w.packed), out.data());
  return out;
}

Status prepare_linear(XnnContext* c, const plan::Op& op, Linear* l) {
  const plan::LinearParams& p = op.p<plan::LinearParams>();
  const detail::LinearView& w = *p.weights;
  l->weights = &w;
  l->N = w.N;
  l->K = w.K;
  l->activation = p.activation;
  l->half = half(c, op);
  // fp32 operator: ReLU is its output clamp (the residual comes after it: act(x + b) + r).
  l->clamp_relu = p.activation == kernels::Activation::kRelu && !l->half;
  const float lo = l->clamp_relu ? 0.0f : -std::numeric_limits<float>::infinity();
  const float hi = std::numeric_limits<float>::infinity();
  size_t bytes = 0;
  t_counted_bytes = &bytes;
  xnn_status st;
  if (w.dtype == DType::kF32) {
    const std::vector<float> rows = unpack_panel_n16<float>(w);
    st = xnn_create_fully_connected_nc_f32(w.K, w.N, w.K, w.N, rows.data(), w.bias, lo, hi, 0, &l->fc);
  } else if (!l->half) {
    const std::vector<uint16_t> halves = unpack_panel_n16<uint16_t>(w);
    std::vector<float> rows(halves.size());
    for (size_t i = 0; i < halves.size(); ++i) rows[i] = half_to_float(halves[i]);
    st = xnn_create_fully_connected_nc_f32(w.K, w.N, w.K, w.N, rows.data(), w.bias, lo, hi, 0, &l->fc);
  } else {
    const std::vector<uint16_t> rows = unpack_panel_n16<uint16_t>(w);
    // No bias here: XNNPACK would add it in half; it is added in fp32 after the conversion.
    l->bias = w.bias;
    st = xnn_create_fully_connected_nc_f16(w.K, w.N, w.K, w.N, rows.data(), nullptr, -INFINITY, INFINITY, 0, &l->fc);
    if (st == xnn_status_success) st = xnn_create_convert_nc_f32_f16(w.K, w.K, w.K, 0, &l->to_half);
    if (st == xnn_status_success) st = xnn_create_convert_nc_f16_f32(w.N, w.N, w.N, 0, &l->to_float);
  }
  t_counted_bytes = nullptr;
  c->packed_bytes += bytes;
  if (st != xnn_status_success) return xnn_error("creating XNNPACK operators", st, op.label);
  return Status::ok();
}

Status prepare(void* cv, const backend::PrepareArgs& args, backend::HeldBytes* held) {
  XnnContext& c = *static_cast<XnnContext*>(cv);
  if (c.threads > 1) {
    c.pool = pthreadpool_create(static_cast<size_t>(c.threads));
    if (!c.pool) return out_of_memory("pthreadpool_create(" + std::to_string(c.threads) + ") failed");
  }
  c.linear_of_op.assign(args.graph->ops.size(), -1);
  c.linears.reserve(static_cast<size_t>(args.op_count));
  for (int i = 0; i < args.op_count; ++i) {
    const plan::Op& op = args.graph->ops[static_cast<size_t>(args.ops[i])];
    c.linears.emplace_back();
    if (Status s = prepare_linear(&c, op, &c.linears.back()); !s) return s;
    c.linear_of_op[static_cast<size_t>(args.ops[i])] = static_cast<int>(c.linears.size()) - 1;
    if (c.linears.back().bias) held->weights_in_place += static_cast<size_t>(c.linears.back().N) * sizeof(float);
  }
  held->weights_packed = c.packed_bytes;
  return Status::ok();
}

// What follows the fully connected operator, on encrt's kernels, row by row:
//   - a row whose input or XNNPACK output is not finite is computed again, whole, by encrt's
//     GEMM (XNNPACK's output clamp turns NaN into -inf, and its fp16 path overflows where fp32
//     does not), so that NaN and ±Inf appear where the CPU backend has them;
//   - else bias (fp16 path), GELU and the residual, in the reference's order: act(x + b) + r.
struct Epilogue {
  const Linear* l;
  const kernels::KernelTable* kt;
  const float* x;
  float* y;
  const float* residual;
};

bool finite(const float* v, int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) acc += v[i] * 0.0f;  // 0 unless some v[i] is NaN or ±Inf
  return acc == 0.0f;
}

void recompute_row(const Epilogue& e, size_t row) {
  const detail::LinearView& w = *e.l->weights;
  kernels::GemmEpilogue ep;
  ep.bias = w.bias;
  ep.activation = e.l->activation;
  ep.residual = e.residual ? e.residual + row * static_cast<size_t>(w.N) : nullptr;
  ep.ldr = w.N;
  const float* a = e.x + row * static_cast<size_t>(w.K);
  float* c = e.y + row * static_cast<size_t>(w.N);
  if (w.dtype == DType::kF32)
    e.kt->gemm_f32(1, w.N, w.K, a, w.K, static_cast<const float*>(w.packed), c, w.N, ep);
  else
    e.kt->gemm_f16(1, w.N, w.K, a, w.K, static_cast<const uint16_t*>(w.packed), c, w.N, ep);
}

void epilogue_row(void* context, size_t row) {
  const Epilogue& e = *static_cast<const Epilogue*>(context);
  const int N = e.l->N;
  float* y = e.y + row * static_cast<size_t>(N);
  if (!finite(e.x + row * static_cast<size_t>(e.l->K), e.l->K) || !finite(y, N)) {
    recompute_row(e, row);
    return;
  }
  if (e.l->bias)
    for (int n = 0; n < N; ++n) y[n] += e.l->bias[n];
  if (e.l->activation == kernels::Activation::kGelu) e.kt->gelu(N, y, y);
  if (e.l->activation == kernels::Activation::kRelu && !e.l->clamp_relu)
    for (int n = 0; n < N; ++n) y[n] = kernels::ref::apply_activation(y[n], kernels::Activation::kRelu);
  if (e.residual) {
    const float* r = e.residual + row * static_cast<size_t>(N);
    for (int n = 0; n < N; ++n) y[n] += r[n];
  }
}

Status run_linear(const XnnContext& c, const backend::RunArgs& args, const plan::Op& op, const Linear& l) {
  const size_t M = plan::rows_in_run(*args.graph, op.out(0), args.shape.batch, args.shape.seq, args.packed);
  const float* x = static_cast<const float*>(args.buffers[static_cast<size_t>(op.in(plan::slot::kX))]);
  float* y = static_cast<float*>(args.buffers[static_cast<size_t>(op.out(0))]);
  const int r = op.in(plan::slot::kLinearResidual);
  const float* residual = r >= 0 ? static_cast<const float*>(args.buffers[static_cast<size_t>(r)]) : nullptr;
  xnn_status st;
  if (!l.half) {
    st = xnn_setup_fully_connected_nc_f32(l.fc, M, x, y, c.pool);
    if (st == xnn_status_success) st = xnn_run_operator(l.fc, c.pool);
  } else {
    unsigned char* scratch = static_cast<unsigned char*>(args.buffers[static_cast<size_t>(op.scratch)]);
    uint16_t* x16 = reinterpret_cast<uint16_t*>(scratch);
    uint16_t* y16 = reinterpret_cast<uint16_t*>(scratch + half_rows_offset(*args.graph, op, args.shape));
    st = xnn_setup_convert_nc_f32_f16(l.to_half, M, x, x16, c.pool);
    if (st == xnn_status_success) st = xnn_run_operator(l.to_half, c.pool);
    if (st == xnn_status_success) st = xnn_setup_fully_connected_nc_f16(l.fc, M, x16, y16, c.pool);
    if (st == xnn_status_success) st = xnn_run_operator(l.fc, c.pool);
    if (st == xnn_status_success) st = xnn_setup_convert_nc_f16_f32(l.to_float, M, y16, y, c.pool);
    if (st == xnn_status_success) st = xnn_run_operator(l.to_float, c.pool);
  }
  if (st != xnn_status_success) return xnn_error("running XNNPACK operators", st, op.label);
  Epilogue e{&l, c.kernels, x, y, residual};
  if (c.pool)
    pthreadpool_parallelize_1d(c.pool, epilogue_row, &e, M, 0);
  else
    for (size_t row = 0; row < M; ++row) epilogue_row(&e, row);
  return Status::ok();
}

Status run(void* cv, const backend::RunArgs& args) {
  const XnnContext& c = *static_cast<const XnnContext*>(cv);
  for (int i = 0; i < args.op_count; ++i) {
    const plan::Op& op = args.graph->ops[static_cast<size_t>(args.ops[i])];
    const int l = c.linear_of_op[static_cast<size_t>(args.ops[i])];
    if (l < 0) return internal_error("xnnpack: op '" + op.label + "' was not prepared");
    if (Status s = run_linear(c, args, op, c.linears[static_cast<size_t>(l)]); !s) return s;
  }
  return Status::ok();
}

std::string implementation(const void* c, const plan::Graph&, const plan::Op& op) {
  if (op.kind != plan::OpKind::kLinear) return "";
  const plan::LinearParams& p = op.p<plan::LinearParams>();
  std::string s = half(c, op) ? "xnn_convert_nc_f32_f16+xnn_fully_connected_nc_f16+xnn_convert_nc_f16_f32"
                              : p.weights->dtype == DType::kF16 ? "xnn_fully_connected_nc_f32(fp16 weights widened)"
                                                                : "xnn_fully_connected_nc_f32";
  if (p.activation == kernels::Activation::kGelu) s += "+gelu(encrt)";
  if (op.in(plan::slot::kLinearResidual) >= 0) s += "+residual(encrt)";
  return s;
}

std::string summary(const void* c) {
  return std::string("XNNPACK (Debian 2022-02 snapshot) fully connected operators, fp16=") +
         (ctx(c).fp16 == Fp16Mode::kHalf ? "half" : "widen") + (library().fp16 ? "" : " (no fp16 operators on this CPU)") +
         ", pthreadpool threads=" + std::to_string(ctx(c).threads);
}

const char* const kOptionKeys[] = {"fp16", nullptr};

}  // namespace

size_t allocations_so_far() { return g_allocations.load(); }

const backend::BackendInterface kXnnpackBackend = {
    /*name=*/"xnnpack",
    /*memory=*/backend::MemoryKind::kHost,
    /*arena_alignment=*/64,
    /*read_overrun=*/XNN_EXTRA_BYTES,
    /*option_keys=*/kOptionKeys,
    create,
    destroy,
    supports,
    scratch_bytes,
    prepare,
    run,
    implementation,
    summary,
    available,
    /*alloc_arena=*/nullptr,
    /*free_arena=*/nullptr,
    /*copy_to_host=*/nullptr,
    /*copy_from_host=*/nullptr,
    /*synchronize=*/nullptr,
    /*replay=*/nullptr,
    /*capture=*/nullptr,
    /*run_profiled=*/nullptr,
    /*storage_dtype=*/nullptr,
    /*last_device_ms=*/nullptr,
    supports_packed,
    /*expand_packed=*/nullptr,  // its memory is the host's: the core expands
    /*dequantizes_int8_linears=*/nullptr,
    /*tuning=*/nullptr,
};

}  // namespace encrt::xnnpack
