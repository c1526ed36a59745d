// Executes the op list: each op splits its work over the thread pool and calls kernels through
// the kernel table. Nothing here allocates; every pointer is an arena offset or a model view.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "session/session_impl.h"

namespace encrt::detail {

namespace {

using plan::Op;
using plan::OpKind;

template <typename F>
void parallel(ThreadPool& pool, int tasks, F& f) {
  pool.run(tasks, [](void* ctx, int task, int thread) { (*static_cast<F*>(ctx))(task, thread); }, &f);
}

// Splits [0, n) into `parts` nearly equal chunks; chunk i is [*begin, *end).
void chunk(int n, int parts, int i, int* begin, int* end) {
  const int size = (n + parts - 1) / parts;
  *begin = std::min(n, i * size);
  *end = std::min(n, *begin + size);
}

// Work is cut into a few more tasks than threads, so that the threads that are awake (the
// caller at least) take over the share of one the OS has descheduled.
constexpr int kTasksPerThread = 2;

// Adds row `row` of an embedding table, times `scale`, to out[0..width).
void add_table_row(const kernels::KernelTable& kt, const TableView& t, int row, float scale, float* out) {
  const size_t base = static_cast<size_t>(row) * t.width;
  switch (t.dtype) {
    case fb::DType::F32: {
      const float* p = static_cast<const float*>(t.data) + base;
      for (int i = 0; i < t.width; ++i) out[i] += p[i] * scale;
      break;
    }
    case fb::DType::F16: {
      kt.add_row_f16(t.width, static_cast<const uint16_t*>(t.data) + base, scale, out);
      break;
    }
    case fb::DType::I8: {
      const int8_t* p = static_cast<const int8_t*>(t.data) + base;
      const float s = t.row_scales[row] * scale;
      for (int i = 0; i < t.width; ++i) out[i] += static_cast<float>(p[i]) * s;
      break;
    }
    default:
      break;
  }
}

class Executor {
 public:
  explicit Executor(SessionImpl* s) : s_(*s), kt_(*s->kernels), pool_(*s->pool) {}

  void run() {
    const bool profile = s_.options.profile;
    for (size_t i = 0; i < s_.graph.ops.size(); ++i) {
      const Op& op = s_.graph.ops[i];
      const auto start = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
      switch (op.kind) {
        case OpKind::kEmbed: embed(op); break;
        case OpKind::kLayerNorm: layer_norm(op); break;
        case OpKind::kQuantize: quantize(op); break;
        case OpKind::kLinear: linear(op); break;
        case OpKind::kAttention: attention(op); break;
        case OpKind::kPoolMean: pool_mean(op); break;
        case OpKind::kPoolFirst: pool_first(op); break;
        case OpKind::kTanh: tanh_in_place(op); break;
      }
      if (s_.observer) observe(op);
      if (profile) {
        OpProfile& p = s_.profile[i];
        p.total_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        ++p.calls;
      }
    }
  }

 private:
  int threads() const { return pool_.threads(); }
  int row_tasks(int rows) const { return threads() == 1 ? 1 : std::min(rows, threads() * kTasksPerThread); }
  int rows_of(int buffer) const { return s_.rows(s_.graph.buffers[static_cast<size_t>(buffer)].rows); }

  void observe(const Op& op) {
    const auto& buffers = s_.graph.buffers;
    auto is_f32_rows = [&](int b, int width) {
      return b >= 0 && buffers[static_cast<size_t>(b)].row_bytes == static_cast<size_t>(width) * sizeof(float);
    };
    const bool in_f32 = op.kind != OpKind::kQuantize && op.in != op.out && is_f32_rows(op.in, op.width_in);
    // (An int8 linear's fp32 input may already be overwritten: its lifetime ended at the
    // quantize op. Only its quantized copy is alive, so no input is reported.)
    const int fp32_in = in_f32 ? op.in : -1;
    const OpOutput out{op.label,
                       plan::op_kind_name(op.kind),
                       op.layer,
                       fp32_in >= 0 ? s_.buffer<float>(fp32_in) : nullptr,
                       op.width_in,
                       is_f32_rows(op.out, op.width_out) ? s_.buffer<float>(op.out) : nullptr,
                       op.width_out,
                       rows_of(op.out)};
    (*s_.observer)(out);
  }

  void embed(const Op& op) {
    const ModelImpl& m = *s_.model;
    const int H = op.width_out, M = s_.batch * s_.seq, S = s_.seq;
    float* x = s_.buffer<float>(op.out);
    auto body = [&](int task, int) {
      int r0, r1;
      chunk(M, row_tasks(M), task, &r0, &r1);
      for (int r = r0; r < r1; ++r) {
        float* row = x + static_cast<size_t>(r) * H;
        std::fill(row, row + H, 0.0f);
        add_table_row(kt_, m.word, s_.ids[r], m.config.embedding_scale, row);
        add_table_row(kt_, m.position, r % S, 1.0f, row);
        if (m.config.type_vocab_size > 0) add_table_row(kt_, m.token_type, s_.token_types ? s_.token_types[r] : 0, 1.0f, row);
      }
      if (op.norm && r1 > r0)
        kt_.layer_norm(r1 - r0, H, x + static_cast<size_t>(r0) * H, H, op.norm->gamma, op.norm->beta,
                       m.config.layer_norm_eps, x + static_cast<size_t>(r0) * H, H);
    };
    parallel(pool_, row_tasks(M), body);
  }

  void layer_norm(const Op& op) {
    const int H = op.width_in, M = rows_of(op.in);
    const float* in = s_.buffer<float>(op.in);
    float* out = s_.buffer<float>(op.out);
    const float eps = s_.model->config.layer_norm_eps;
    auto body = [&](int task, int) {
      int r0, r1;
      chunk(M, row_tasks(M), task, &r0, &r1);
      if (r1 > r0)
        kt_.layer_norm(r1 - r0, H, in + static_cast<size_t>(r0) * H, H, op.norm->gamma, op.norm->beta, eps,
                       out + static_cast<size_t>(r0) * H, H);
    };
    parallel(pool_, row_tasks(M), body);
  }

  void quantize(const Op& op) {
    const int K = op.width_in, M = rows_of(op.in), ldq = kernels::round_up(K, kernels::kPanelK);
    const float* in = s_.buffer<float>(op.in);
    uint8_t* q = s_.buffer<uint8_t>(op.out);
    float* scale = s_.buffer<float>(op.q_scale);
    int32_t* zp = s_.buffer<int32_t>(op.q_zero_point);
    auto body = [&](int task, int) {
      int r0, r1;
      chunk(M, row_tasks(M), task, &r0, &r1);
      if (r1 > r0)
        kt_.quantize_rows_u8(r1 - r0, K, in + static_cast<size_t>(r0) * K, K, op.linear->activation_multipliers, q + static_cast<size_t>(r0) * ldq, ldq,
                             scale + r0, zp + r0);
    };
    parallel(pool_, row_tasks(M), body);
  }

  // Rows are split across threads when each gets a useful block of rows; otherwise whole
  // 16-column weight panels are.
  void linear(const Op& op) {
    const LinearView& w = *op.linear;
    const int M = rows_of(op.out), N = w.N, K = w.K;
    float* out = s_.buffer<float>(op.out);
    const float* residual = op.residual >= 0 ? s_.buffer<float>(op.residual) : nullptr;
    const bool split_rows = M >= 8 * threads();
    const int panels = (N + kernels::kPanelN - 1) / kernels::kPanelN;
    const int tasks = split_rows ? row_tasks(M) : std::min(panels, row_tasks(panels));
    auto body = [&](int task, int) {
      int m0 = 0, m1 = M, n0 = 0, n1 = N;
      if (split_rows) {
        chunk(M, tasks, task, &m0, &m1);
      } else {
        int p0, p1;
        chunk(panels, tasks, task, &p0, &p1);
        n0 = p0 * kernels::kPanelN;
        n1 = std::min(N, p1 * kernels::kPanelN);
      }
      if (m1 <= m0 || n1 <= n0) return;
      kernels::GemmEpilogue ep;
      ep.bias = w.bias + n0;
      ep.activation = op.activation;
      ep.residual = residual ? residual + static_cast<size_t>(m0) * N + n0 : nullptr;
      ep.ldr = N;
      float* c = out + static_cast<size_t>(m0) * N + n0;
      const size_t panel0 = static_cast<size_t>(n0 / kernels::kPanelN);
      switch (w.dtype) {
        case fb::DType::F32: {
          const float* a = s_.buffer<float>(op.in) + static_cast<size_t>(m0) * K;
          kt_.gemm_f32(m1 - m0, n1 - n0, K, a, K, static_cast<const float*>(w.packed) + panel0 * K * kernels::kPanelN,
                       c, N, ep);
          break;
        }
        case fb::DType::F16: {
          const float* a = s_.buffer<float>(op.in) + static_cast<size_t>(m0) * K;
          kt_.gemm_f16(m1 - m0, n1 - n0, K, a, K,
                       static_cast<const uint16_t*>(w.packed) + panel0 * K * kernels::kPanelN, c, N, ep);
          break;
        }
        case fb::DType::I8: {
          const int ldq = kernels::round_up(K, kernels::kPanelK);
          kernels::QuantizedRows a;
          a.data = s_.buffer<uint8_t>(op.in) + static_cast<size_t>(m0) * ldq;
          a.ld = ldq;
          a.scale = s_.buffer<float>(op.q_scale) + m0;
          a.zero_point = s_.buffer<int32_t>(op.q_zero_point) + m0;
          kt_.gemm_u8s8(m1 - m0, n1 - n0, K, a, static_cast<const int8_t*>(w.packed) + panel0 * ldq * kernels::kPanelN,
                        w.column_sums + n0, w.scales + n0, c, N, ep);
          break;
        }
        default:
          break;
      }
    };
    parallel(pool_, tasks, body);
  }

  void attention(const Op& op) {
    const ModelConfig& c = s_.model->config;
    kernels::AttentionArgs args;
    args.seq = s_.seq;
    args.heads = c.num_heads;
    args.head_dim = c.head_dim();
    args.qkv = s_.buffer<float>(op.in);
    args.ld_qkv = op.width_in;
    args.mask = s_.mask;
    args.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim()));
    args.out = s_.buffer<float>(op.out);
    args.ld_out = op.width_out;
    args.probs = op.probs >= 0 ? s_.buffer<float>(op.probs) : nullptr;
    const kernels::AttentionFn fn = op.int8_attention ? kt_.attention_i8 : kt_.attention_f32;
    unsigned char* scratch = s_.buffer<unsigned char>(op.scratch);
    auto body = [&](int task, int thread) {
      fn(args, task / c.num_heads, task % c.num_heads, scratch + static_cast<size_t>(thread) * op.scratch_per_thread);
    };
    parallel(pool_, s_.batch * c.num_heads, body);
  }

  void pool_mean(const Op& op) {
    const int H = op.width_in, S = s_.seq;
    const float* x = s_.buffer<float>(op.in);
    float* out = s_.buffer<float>(op.out);
    for (int b = 0; b < s_.batch; ++b) {
      float* o = out + static_cast<size_t>(b) * H;
      std::fill(o, o + H, 0.0f);
      int count = 0;
      for (int t = 0; t < S; ++t) {
        if (s_.mask && s_.mask[static_cast<size_t>(b) * S + t] == 0) continue;
        const float* row = x + (static_cast<size_t>(b) * S + t) * H;
        for (int i = 0; i < H; ++i) o[i] += row[i];
        ++count;
      }
      if (count > 0) {
        const float inv = 1.0f / static_cast<float>(count);
        for (int i = 0; i < H; ++i) o[i] *= inv;
      }
    }
  }

  void pool_first(const Op& op) {
    const int H = op.width_in;
    const float* x = s_.buffer<float>(op.in);
    float* out = s_.buffer<float>(op.out);
    for (int b = 0; b < s_.batch; ++b)
      std::memcpy(out + static_cast<size_t>(b) * H, x + static_cast<size_t>(b) * s_.seq * H, sizeof(float) * H);
  }

  void tanh_in_place(const Op& op) {
    float* x = s_.buffer<float>(op.out);
    const size_t n = static_cast<size_t>(rows_of(op.out)) * op.width_out;
    for (size_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
  }

  SessionImpl& s_;
  const kernels::KernelTable& kt_;
  ThreadPool& pool_;
};

}  // namespace

void execute_graph(SessionImpl* impl) { Executor(impl).run(); }

}  // namespace encrt::detail
