#include "backends/cpu/cpu_executor.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace encrt::cpu {

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
void add_table_row(const kernels::KernelTable& kt, const detail::TableView& t, int row, float scale, float* out) {
  const size_t base = static_cast<size_t>(row) * t.width;
  switch (t.dtype) {
    case DType::kF32: {
      const float* p = static_cast<const float*>(t.data) + base;
      for (int i = 0; i < t.width; ++i) out[i] += p[i] * scale;
      break;
    }
    case DType::kF16: {
      kt.add_row_f16(t.width, static_cast<const uint16_t*>(t.data) + base, scale, out);
      break;
    }
    case DType::kI8: {
      const int8_t* p = static_cast<const int8_t*>(t.data) + base;
      const float s = t.row_scales[row] * scale;
      for (int i = 0; i < t.width; ++i) out[i] += static_cast<float>(p[i]) * s;
      break;
    }
    default:
      break;
  }
}

class OpRunner {
 public:
  OpRunner(const kernels::KernelTable& kt, ThreadPool& pool, const backend::RunArgs& args)
      : kt_(kt), pool_(pool), g_(*args.graph), buffers_(args.buffers), batch_(args.shape.batch), seq_(args.shape.seq),
        src_mask_per_sequence_(args.src_mask_per_sequence), packed_(args.packed) {}

  void run(const Op& op) {
    switch (op.kind) {
      case OpKind::kEmbed: embed(op); break;
      case OpKind::kLayerNorm: layer_norm(op); break;
      case OpKind::kQuantize: quantize(op); break;
      case OpKind::kLinear: linear(op); break;
      case OpKind::kAttention: attention(op); break;
      case OpKind::kPoolMean: pool_mean(op); break;
      case OpKind::kPoolFirst: pool_first(op); break;
      case OpKind::kTanh: tanh_in_place(op); break;
      case OpKind::kCopy: break;  // never placed here: supports() refuses it
      case OpKind::kPoolMax: pool_max(op); break;
      case OpKind::kL2Normalize: l2_normalize(op); break;
      case OpKind::kScores: scores(op); break;
    }
  }

  // A LayerNorm (or an embedding with its LayerNorm) followed by the kQuantize of its output for
  // an int8 linear, as one pass: each task normalizes its rows and quantizes them while they are
  // in its core's cache, and the pool forks and joins once instead of twice. The same kernels in
  // the same order on the same rows: the outputs are those of the two ops run one after the other.
  void norm_then_quantize(const Op& norm, const Op& quantize_op) {
    over_row_blocks(rows_of(norm.out(0)), [&](int r0, int r1) {
      if (norm.kind == OpKind::kEmbed)
        embed_rows(norm, r0, r1);
      else
        layer_norm_rows(norm, r0, r1);
      quantize_rows(quantize_op, r0, r1);
    });
  }

 private:
  template <typename T>
  T* buf(int id) const {
    return id >= 0 ? static_cast<T*>(buffers_[static_cast<size_t>(id)]) : nullptr;
  }
  int threads() const { return pool_.threads(); }
  int row_tasks(int rows) const { return threads() == 1 ? 1 : std::min(rows, threads() * kTasksPerThread); }
  // fn(r0, r1) on the pool for each non-empty block [r0, r1) of M rows (row_tasks(M) blocks).
  template <typename F>
  void over_row_blocks(int M, F fn) {
    auto body = [&](int task, int) {
      int r0, r1;
      chunk(M, row_tasks(M), task, &r0, &r1);
      if (r1 > r0) fn(r0, r1);
    };
    parallel(pool_, row_tasks(M), body);
  }
  int rows_of(int buffer) const { return static_cast<int>(plan::rows_in_run(g_, buffer, batch_, seq_, packed_)); }
  // Sequence b's rows in the token-row buffers: [*first, *first + *count).
  void sequence_rows(int b, int* first, int* count) const {
    if (packed_) {
      *first = packed_->offsets[b];
      *count = packed_->offsets[b + 1] - packed_->offsets[b];
    } else {
      *first = b * seq_;
      *count = seq_;
    }
  }

  void embed(const Op& op) {
    over_row_blocks(rows_of(op.out(0)), [&](int r0, int r1) { embed_rows(op, r0, r1); });
  }

  // The *_rows functions: rows [r0, r1) of one op, r0 < r1 (over_row_blocks' blocks).
  // Rows of an embedding op: the table rows added, then its LayerNorm if it has one.
  void embed_rows(const Op& op, int r0, int r1) {
    const plan::EmbedParams& p = op.p<plan::EmbedParams>();
    const int H = p.width, S = seq_;
    const int32_t* ids = buf<const int32_t>(op.in(plan::slot::kX));
    const int32_t* types = buf<const int32_t>(op.in(plan::slot::kEmbedTokenTypes));
    float* x = buf<float>(op.out(0));
    for (int r = r0; r < r1; ++r) {
      float* row = x + static_cast<size_t>(r) * H;
      const int at = packed_ ? packed_->source[r] : r;  // the token's place in the [batch, seq] inputs
      std::fill(row, row + H, 0.0f);
      add_table_row(kt_, *p.word, ids[at], p.scale, row);
      add_table_row(kt_, *p.position, at % S, 1.0f, row);
      if (p.token_type) add_table_row(kt_, *p.token_type, types ? types[at] : 0, 1.0f, row);
    }
    if (p.norm)
      kt_.layer_norm(r1 - r0, H, x + static_cast<size_t>(r0) * H, H, p.norm->gamma, p.norm->beta, p.eps,
                     x + static_cast<size_t>(r0) * H, H);
  }

  void layer_norm(const Op& op) {
    over_row_blocks(rows_of(op.in(plan::slot::kX)), [&](int r0, int r1) { layer_norm_rows(op, r0, r1); });
  }

  void layer_norm_rows(const Op& op, int r0, int r1) {
    const plan::LayerNormParams& p = op.p<plan::LayerNormParams>();
    const int H = p.width;
    const float* in = buf<const float>(op.in(plan::slot::kX));
    float* out = buf<float>(op.out(0));
    kt_.layer_norm(r1 - r0, H, in + static_cast<size_t>(r0) * H, H, p.norm->gamma, p.norm->beta, p.eps,
                   out + static_cast<size_t>(r0) * H, H);
  }

  void quantize(const Op& op) {
    over_row_blocks(rows_of(op.in(plan::slot::kX)), [&](int r0, int r1) { quantize_rows(op, r0, r1); });
  }

  void quantize_rows(const Op& op, int r0, int r1) {
    const detail::LinearView& w = *op.p<plan::QuantizeParams>().linear;
    const int K = w.K, ldq = kernels::round_up(K, kernels::kPanelK);
    const float* in = buf<const float>(op.in(plan::slot::kX));
    uint8_t* q = buf<uint8_t>(op.out(0));
    float* scale = buf<float>(op.out(plan::slot::kQuantizeScale));
    int32_t* zp = buf<int32_t>(op.out(plan::slot::kQuantizeZeroPoint));
    kt_.quantize_rows_u8(r1 - r0, K, in + static_cast<size_t>(r0) * K, K, w.activation_multipliers,
                         q + static_cast<size_t>(r0) * ldq, ldq, scale + r0, zp + r0);
  }

  // Rows are split across threads when each gets a useful block of rows; otherwise whole
  // 16-column weight panels are. Split by rows, every thread streams all of the layer's weights;
  // split by panels, only its share of them, and all of the (few) activation rows: so the float
  // layers, whose weights are 2-4 times the bytes of int8 ones, take panels up to more rows (16
  // per thread per weight byte). On a 2-core Xeon VM, MiniLM on 2 threads, panels against rows
  // (interleaved `encrt bench`, best-of): fp32 at `avx512` b1 s16 1.34 against 2.08 ms, s32 2.27
  // against 3.11, s64 4.21 against 4.60, s128 even; fp32 at `avx2` s16 1.95 against 2.82; fp16 at
  // `avx512fp16` s16 0.87 against 1.10, at `avx512` s32 2.36 against 2.55, s48 3.44 against 3.32
  // (there panels lose). int8: the kernel's wishes (lists/gemm_u8s8.h), else 8 rows per thread
  // (panels gained nothing measurable there: the weights are a quarter of fp32's).
  void linear(const Op& op) {
    const plan::LinearParams& p = op.p<plan::LinearParams>();
    const detail::LinearView& w = *p.weights;
    const int M = rows_of(op.out(0)), N = w.N, K = w.K;
    float* out = buf<float>(op.out(0));
    const float* residual = buf<const float>(op.in(plan::slot::kLinearResidual));
    const bool own_kernel = w.dtype == DType::kI8 && !runs_narrow(kt_, w);
    const int min_rows = own_kernel ? kt_.gemm_u8s8_min_task_rows : 0;
    int rows_per_thread = 8;
    if (w.dtype != DType::kI8) rows_per_thread = 16 * static_cast<int>(dtype_size(w.dtype));
    if (own_kernel && kt_.gemm_u8s8_min_rows_per_thread > 0) rows_per_thread = kt_.gemm_u8s8_min_rows_per_thread;
    const bool split_rows = M >= rows_per_thread * threads();
    unsigned char* scratch = buf<unsigned char>(op.scratch);
    const size_t per_thread = scratch ? g_.buffers[static_cast<size_t>(op.scratch)].max_bytes / static_cast<size_t>(threads()) : 0;
    const int panels = (N + kernels::kPanelN - 1) / kernels::kPanelN;
    // By rows: row_tasks' blocks, the same as the LayerNorm and quantization around the linear
    // (so that each block stays on the core that wrote it, thread_pool.h), but no fewer rows per
    // task than the kernel asks for while every thread still gets one.
    int tasks = split_rows ? row_tasks(M) : std::min(panels, row_tasks(panels));
    if (split_rows && min_rows > 0) tasks = std::max(threads(), std::min(tasks, M / min_rows));
    auto body = [&](int task, int thread) {
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
      ep.activation = p.activation;
      ep.residual = residual ? residual + static_cast<size_t>(m0) * N + n0 : nullptr;
      ep.ldr = N;
      float* c = out + static_cast<size_t>(m0) * N + n0;
      const size_t panel0 = static_cast<size_t>(n0 / kernels::kPanelN);
      switch (w.dtype) {
        case DType::kF32: {
          const float* a = buf<const float>(op.in(plan::slot::kX)) + static_cast<size_t>(m0) * K;
          kt_.gemm_f32(m1 - m0, n1 - n0, K, a, K, static_cast<const float*>(w.packed) + panel0 * K * kernels::kPanelN,
                       c, N, ep);
          break;
        }
        case DType::kF16: {
          const float* a = buf<const float>(op.in(plan::slot::kX)) + static_cast<size_t>(m0) * K;
          kt_.gemm_f16(m1 - m0, n1 - n0, K, a, K,
                       static_cast<const uint16_t*>(w.packed) + panel0 * K * kernels::kPanelN, c, N, ep);
          break;
        }
        case DType::kI8: {
          const int ldq = kernels::round_up(K, kernels::kPanelK);
          kernels::QuantizedRows a;
          a.data = buf<const uint8_t>(op.in(plan::slot::kX)) + static_cast<size_t>(m0) * ldq;
          a.ld = ldq;
          a.scale = buf<const float>(op.in(plan::slot::kLinearScale)) + m0;
          a.zero_point = buf<const int32_t>(op.in(plan::slot::kLinearZeroPoint)) + m0;
          a.workspace = scratch ? scratch + static_cast<size_t>(thread) * per_thread : nullptr;
          const kernels::GemmU8S8Fn gemm = runs_narrow(kt_, w) ? kt_.gemm_u8s7 : kt_.gemm_u8s8;
          gemm(m1 - m0, n1 - n0, K, a, static_cast<const int8_t*>(w.packed) + panel0 * ldq * kernels::kPanelN,
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
    const plan::AttentionParams& p = op.p<plan::AttentionParams>();
    kernels::AttentionArgs args;
    args.seq = seq_;
    args.heads = p.heads;
    args.head_dim = p.head_dim;
    args.qkv = buf<const float>(op.in(plan::slot::kX));
    args.ld_qkv = 3 * p.heads * p.head_dim;
    args.mask = buf<const int32_t>(op.in(plan::slot::kAttentionMask));
    args.scale = p.scale;
    args.out = buf<float>(op.out(0));
    args.ld_out = p.heads * p.head_dim;
    args.probs = buf<float>(op.out(plan::slot::kAttentionProbs));
    args.pair_blocked = buf<const uint8_t>(op.in(plan::slot::kAttentionSrcMaskBool));
    args.pair_bias = buf<const float>(op.in(plan::slot::kAttentionSrcMaskFloat));
    args.pair_batch_stride = src_mask_per_sequence_ ? static_cast<size_t>(seq_) * static_cast<size_t>(seq_) : 0;
    args.window = p.window;
    const kernels::AttentionFn fn = p.int8 ? kt_.attention_i8 : kt_.attention_f32;
    unsigned char* scratch = buf<unsigned char>(op.scratch);
    const size_t per_thread = g_.buffers[static_cast<size_t>(op.scratch)].max_bytes / static_cast<size_t>(threads());
    if (packed_) {
      // Each sequence is a batch of one over its own rows, every key real (supports_packed()
      // keeps probabilities, windows and, in the core, pair masks out of packed runs).
      auto body = [&](int task, int thread) {
        const int b = task / p.heads;
        int first, count;
        sequence_rows(b, &first, &count);
        if (count == 0) return;
        kernels::AttentionArgs one = args;
        one.seq = count;
        one.qkv = args.qkv + static_cast<size_t>(first) * args.ld_qkv;
        one.out = args.out + static_cast<size_t>(first) * args.ld_out;
        one.mask = nullptr;
        fn(one, 0, task % p.heads, scratch + static_cast<size_t>(thread) * per_thread);
      };
      parallel(pool_, batch_ * p.heads, body);
      return;
    }
    auto body = [&](int task, int thread) {
      fn(args, task / p.heads, task % p.heads, scratch + static_cast<size_t>(thread) * per_thread);
    };
    parallel(pool_, batch_ * p.heads, body);
  }

  void pool_mean(const Op& op) {
    const int H = op.p<plan::RowsParams>().width, S = seq_;
    const float* x = buf<const float>(op.in(plan::slot::kX));
    const int32_t* mask = buf<const int32_t>(op.in(plan::slot::kPoolMask));
    float* out = buf<float>(op.out(0));
    for (int b = 0; b < batch_; ++b) {
      float* o = out + static_cast<size_t>(b) * H;
      std::fill(o, o + H, 0.0f);
      int count = 0, first, rows;
      sequence_rows(b, &first, &rows);
      for (int t = 0; t < rows; ++t) {
        if (!packed_ && mask && mask[static_cast<size_t>(b) * S + t] == 0) continue;
        const float* row = x + (static_cast<size_t>(first) + t) * H;
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
    const int H = op.p<plan::RowsParams>().width;
    const float* x = buf<const float>(op.in(plan::slot::kX));
    float* out = buf<float>(op.out(0));
    // Packed: the session packs only batches whose every sequence starts with a real token, so the
    // first row of each sequence is its position 0, as in the padded run.
    for (int b = 0; b < batch_; ++b) {
      int first, rows;
      sequence_rows(b, &first, &rows);
      float* o = out + static_cast<size_t>(b) * H;
      if (rows == 0) std::fill(o, o + H, 0.0f);
      else std::memcpy(o, x + static_cast<size_t>(first) * H, sizeof(float) * H);
    }
  }

  // sentence-transformers' max pooling: padding counts as -1e9, so a sequence with a real token
  // gets the largest of its real tokens; one without any (an all-zero mask) gets zeros, as mean
  // pooling does.
  void pool_max(const Op& op) {
    const int H = op.p<plan::RowsParams>().width, S = seq_;
    const float* x = buf<const float>(op.in(plan::slot::kX));
    const int32_t* mask = buf<const int32_t>(op.in(plan::slot::kPoolMask));
    float* out = buf<float>(op.out(0));
    for (int b = 0; b < batch_; ++b) {
      float* o = out + static_cast<size_t>(b) * H;
      bool any = false;
      int first, rows;
      sequence_rows(b, &first, &rows);
      for (int t = 0; t < rows; ++t) {
        if (!packed_ && mask && mask[static_cast<size_t>(b) * S + t] == 0) continue;
        const float* row = x + (static_cast<size_t>(first) + t) * H;
        if (!any) std::memcpy(o, row, sizeof(float) * H);
        else
          for (int i = 0; i < H; ++i) o[i] = row[i] > o[i] || std::isnan(row[i]) ? row[i] : o[i];  // NaN wins, as in torch.max
        any = true;
      }
      if (!any) std::fill(o, o + H, 0.0f);
    }
  }

  // torch.nn.functional.normalize(x, p=2, dim=1): x / max(||x||, 1e-12).
  void l2_normalize(const Op& op) {
    const int H = op.p<plan::RowsParams>().width, M = rows_of(op.out(0));
    const float* x = buf<const float>(op.in(plan::slot::kX));
    float* y = buf<float>(op.out(0));
    for (int r = 0; r < M; ++r) {
      const float* xr = x + static_cast<size_t>(r) * H;
      float* yr = y + static_cast<size_t>(r) * H;
      double sum = 0.0;
      for (int i = 0; i < H; ++i) sum += static_cast<double>(xr[i]) * xr[i];
      const float norm = std::max(static_cast<float>(std::sqrt(sum)), 1e-12f);
      for (int i = 0; i < H; ++i) yr[i] = xr[i] / norm;
    }
  }

  // A head's scores per row of logits, and (single-label heads) the first largest logit's id.
  void scores(const Op& op) {
    const plan::ScoresParams& p = op.p<plan::ScoresParams>();
    const int N = p.width, M = rows_of(op.in(plan::slot::kX));
    const float* logits = buf<const float>(op.in(plan::slot::kX));
    float* out = buf<float>(op.out(0));
    int32_t* labels = buf<int32_t>(op.out(plan::slot::kScoresLabels));
    for (int r = 0; r < M; ++r) {
      const float* z = logits + static_cast<size_t>(r) * N;
      float* s = out + static_cast<size_t>(r) * N;
      int best = 0;
      for (int i = 1; i < N; ++i)
        if (z[i] > z[best] || (std::isnan(z[i]) && !std::isnan(z[best]))) best = i;
      if (labels) labels[r] = best;
      switch (p.function) {
        case detail::ScoreFunction::kSoftmax: {
          const float top = z[best];
          double sum = 0.0;
          for (int i = 0; i < N; ++i) sum += std::exp(static_cast<double>(z[i]) - top);
          for (int i = 0; i < N; ++i) s[i] = static_cast<float>(std::exp(static_cast<double>(z[i]) - top) / sum);
          break;
        }
        case detail::ScoreFunction::kSigmoid:
          for (int i = 0; i < N; ++i) s[i] = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(z[i]))));
          break;
        case detail::ScoreFunction::kIdentity:
          std::memcpy(s, z, sizeof(float) * N);
          break;
      }
    }
  }

  void tanh_in_place(const Op& op) {
    float* x = buf<float>(op.out(0));
    const size_t n = static_cast<size_t>(rows_of(op.out(0))) * op.p<plan::RowsParams>().width;
    for (size_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
  }

  const kernels::KernelTable& kt_;
  ThreadPool& pool_;
  const plan::Graph& g_;
  void* const* buffers_;
  const int batch_;
  const int seq_;
  const bool src_mask_per_sequence_;
  const plan::TokenLayout* packed_;  // null: a padded run
};

}  // namespace

void execute_op(const kernels::KernelTable& kernels, ThreadPool& pool, const backend::RunArgs& args, int op) {
  OpRunner(kernels, pool, args).run(args.graph->ops[static_cast<size_t>(op)]);
}

bool quantizes_norm_output(const plan::Graph& g, int norm, int quantize) {
  const Op& a = g.ops[static_cast<size_t>(norm)];
  const Op& b = g.ops[static_cast<size_t>(quantize)];
  const bool normalizes = a.kind == OpKind::kLayerNorm || (a.kind == OpKind::kEmbed && a.p<plan::EmbedParams>().norm);
  return normalizes && b.kind == OpKind::kQuantize && b.in(plan::slot::kX) == a.out(0);
}

void execute_norm_then_quantize(const kernels::KernelTable& kernels, ThreadPool& pool, const backend::RunArgs& args,
                                int norm, int quantize) {
  OpRunner(kernels, pool, args)
      .norm_then_quantize(args.graph->ops[static_cast<size_t>(norm)], args.graph->ops[static_cast<size_t>(quantize)]);
}

size_t linear_scratch_per_thread(const kernels::KernelTable& kernels, const plan::LinearParams& p) {
  if (p.weights->dtype != DType::kI8) return 0;
  const int K = p.weights->K;
  const size_t a = kernels.gemm_u8s8_workspace ? kernels.gemm_u8s8_workspace(K) : 0;
  const size_t b = kernels.gemm_u8s8_any_weights_workspace ? kernels.gemm_u8s8_any_weights_workspace(K) : 0;
  return (std::max(a, b) + 63) / 64 * 64;
}

size_t attention_scratch_per_thread(const kernels::KernelTable& kernels, const plan::AttentionParams& p, int max_seq) {
  const kernels::AttentionScratchFn fn = p.int8 ? kernels.attention_i8_scratch : kernels.attention_f32_scratch;
  return (fn(max_seq, p.head_dim) + 63) / 64 * 64;
}

}  // namespace encrt::cpu
