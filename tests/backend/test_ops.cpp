// Every op kind, as a graph of its own on odd shapes, through the backend under test and through
// the reference (the CPU backend, isa=scalar), on the same inputs: sentinel bytes around every
// buffer (and past the rows of a run smaller than the planned shape) must stay untouched, inputs
// unchanged, NaN and ±Inf exactly where the reference has them, and the error within the
// backend's stated tolerance (backend_under_test.cpp). An op the backend does not support is
// reported as such (WARN: the CPU backend runs it in a session), not passed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

#include "backend/backend_under_test.h"
#include "backend/compare.h"
#include "backend/op_problem.h"
#include "backend/registry.h"
#include "core/half.h"
#include "kernels/ref/ref_kernels.h"

namespace {

using namespace encrt;
using namespace encrt::conformance;
using plan::OpKind;
using plan::Rows;

std::vector<float> uniform(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

template <typename T>
std::vector<unsigned char> as_bytes(const std::vector<T>& v, size_t count) {
  std::vector<unsigned char> out(count * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// NaN, +Inf and -Inf at a few places of the first `n` values.
void poison(std::vector<float>* v, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};
  for (int i = 0; i < 3; ++i) (*v)[rng() % n] = specials[i];
}

constexpr backend::Shape kMax{3, 9};
const backend::Shape kRuns[] = {{2, 7}, {3, 9}};

// [batch, seq] mask: sequence 0 all real, 1 real with holes, 2 no real token.
std::vector<int32_t> mask_values(backend::Shape s) {
  std::vector<int32_t> m(static_cast<size_t>(s.batch) * s.seq, 1);
  for (int t = 0; t < s.seq; ++t) {
    if (s.batch > 1) m[static_cast<size_t>(s.seq) + t] = (t % 3 == 1) ? 0 : 1;
    if (s.batch > 2) m[2 * static_cast<size_t>(s.seq) + t] = 0;
  }
  return m;
}

std::unique_ptr<OpProblem> problem(const std::string& name, backend::Shape run) {
  auto p = std::make_unique<OpProblem>();
  p->name = name;
  p->max = kMax;
  p->run = run;
  return p;
}

size_t rows(const OpProblem& p, Rows r) { return plan::max_rows(r, p.run.batch, p.run.seq); }

// An f32 rows buffer filled with uniform values on the run's rows.
int f32_input(OpProblem* p, const std::string& name, Rows r, int width, float lo, float hi, uint32_t seed, bool nonfinite) {
  const int b = p->add_buffer(name, DType::kF32, r, static_cast<size_t>(width) * sizeof(float));
  const size_t n = rows(*p, r) * width;
  std::vector<float> v = uniform(n, lo, hi, seed);
  if (nonfinite) poison(&v, n, seed + 99);
  p->input[static_cast<size_t>(b)] = as_bytes(v, n);
  return b;
}

int mask_input(OpProblem* p) {
  const int b = p->add_buffer("attention_mask", DType::kI32, Rows::kTokens, sizeof(int32_t));
  p->graph.buffers[static_cast<size_t>(b)].storage = plan::Storage::kInput;
  p->input[static_cast<size_t>(b)] = as_bytes(mask_values(p->run), static_cast<size_t>(p->run.batch) * p->run.seq);
  return b;
}

void add_op(OpProblem* p, OpKind kind, std::vector<int> in, std::vector<int> out, plan::OpParams params) {
  plan::Op op;
  op.kind = kind;
  op.label = p->name;
  op.inputs = std::move(in);
  op.outputs = std::move(out);
  op.params = params;
  p->graph.ops.push_back(std::move(op));
}

const detail::LinearView* linear_weights(OpProblem* p, DType dtype, int N, int K, bool multipliers, uint32_t seed) {
  const std::vector<float> w = uniform(static_cast<size_t>(N) * K, -0.5f, 0.5f, seed);
  detail::LinearView v;
  v.dtype = dtype;
  v.N = N;
  v.K = K;
  p->f32.push_back(uniform(static_cast<size_t>(N), -1.0f, 1.0f, seed + 1));
  v.bias = p->f32.back().data();
  if (dtype == DType::kF32) {
    p->f32.emplace_back(kernels::panel_f32_size(N, K));
    kernels::ref::pack_weights_f32(N, K, w.data(), p->f32.back().data());
    v.packed = p->f32.back().data();
  } else if (dtype == DType::kF16) {
    p->f16.emplace_back(kernels::panel_f32_size(N, K));
    kernels::ref::pack_weights_f16(N, K, w.data(), p->f16.back().data());
    v.packed = p->f16.back().data();
  } else {
    p->i8.emplace_back(kernels::panel_i8_size(N, K));
    p->f32.emplace_back(static_cast<size_t>(N));
    p->i32.emplace_back(static_cast<size_t>(N));
    kernels::ref::quantize_pack_weights_i8(N, K, w.data(), p->i8.back().data(), p->f32.back().data(), p->i32.back().data());
    v.packed = p->i8.back().data();
    v.scales = p->f32.back().data();
    v.column_sums = p->i32.back().data();
    if (multipliers) {
      p->f32.push_back(uniform(static_cast<size_t>(K), 0.25f, 4.0f, seed + 2));
      v.activation_multipliers = p->f32.back().data();
    }
  }
  p->linears.push_back(v);
  return &p->linears.back();
}

const detail::NormView* norm(OpProblem* p, int H, uint32_t seed) {
  p->f32.push_back(uniform(static_cast<size_t>(H), 0.5f, 1.5f, seed));
  const float* gamma = p->f32.back().data();
  p->f32.push_back(uniform(static_cast<size_t>(H), -0.5f, 0.5f, seed + 1));
  p->norms.push_back({gamma, p->f32.back().data()});
  return &p->norms.back();
}

// ---- One problem per op kind and variant.

std::unique_ptr<OpProblem> layer_norm_problem(int H, bool in_place, backend::Shape run, bool nonfinite) {
  auto p = problem("layer_norm H" + std::to_string(H) + (in_place ? " in place" : ""), run);
  p->nonfinite = nonfinite;
  const int x = f32_input(p.get(), "x", Rows::kTokens, H, -3.0f, 3.0f, 11, nonfinite);
  const int y = in_place ? x : p->add_buffer("y", DType::kF32, Rows::kTokens, static_cast<size_t>(H) * sizeof(float));
  add_op(p.get(), OpKind::kLayerNorm, {x}, {y}, plan::LayerNormParams{norm(p.get(), H, 12), 1e-5f, H});
  return p;
}

std::unique_ptr<OpProblem> linear_problem(DType dtype, int N, int K, kernels::Activation act, bool residual, Rows r,
                                          backend::Shape run, bool nonfinite, backend::Shape max = kMax) {
  std::ostringstream name;
  name << "linear " << dtype_name(dtype) << " N" << N << " K" << K << " act" << static_cast<int>(act)
       << (residual ? " +residual" : "") << (r == Rows::kSequences ? " (sequences)" : "");
  auto p = problem(name.str(), run);
  p->max = max;  // before any buffer: their sizes are planned from it
  p->nonfinite = nonfinite;
  const detail::LinearView* w = linear_weights(p.get(), dtype, N, K, false, 21);
  std::vector<int> in;
  if (dtype == DType::kI8) {
    const int ldq = kernels::round_up(K, kernels::kPanelK);
    const int q = p->add_buffer("x_u8", DType::kU8, r, static_cast<size_t>(ldq));
    const int scale = p->add_buffer("x_scale", DType::kF32, r, sizeof(float));
    const int zp = p->add_buffer("x_zero_point", DType::kI32, r, sizeof(int32_t));
    const size_t m = rows(*p, r);
    std::mt19937 rng(23);
    std::vector<unsigned char> qv(m * ldq);
    for (auto& v : qv) v = static_cast<unsigned char>(rng() & 255);
    p->input[static_cast<size_t>(q)] = qv;
    std::vector<float> sv = uniform(m, 0.001f, 0.05f, 24);
    std::vector<int32_t> zv(m);
    for (auto& z : zv) z = static_cast<int32_t>(rng() % 256);
    p->input[static_cast<size_t>(scale)] = as_bytes(sv, m);
    p->input[static_cast<size_t>(zp)] = as_bytes(zv, m);
    in = {q, -1, scale, zp};
  } else {
    in = {f32_input(p.get(), "x", r, K, -1.0f, 1.0f, 22, nonfinite), -1, -1, -1};
  }
  if (residual) in[plan::slot::kLinearResidual] = f32_input(p.get(), "residual", r, N, -2.0f, 2.0f, 25, false);
  const int y = p->add_buffer("y", DType::kF32, r, static_cast<size_t>(N) * sizeof(float));
  add_op(p.get(), OpKind::kLinear, in, {y}, plan::LinearParams{w, act});
  return p;
}

std::unique_ptr<OpProblem> quantize_problem(int K, bool multipliers, backend::Shape run) {
  auto p = problem("quantize K" + std::to_string(K) + (multipliers ? " with multipliers" : ""), run);
  const detail::LinearView* w = linear_weights(p.get(), DType::kI8, 16, K, multipliers, 31);
  const int x = f32_input(p.get(), "x", Rows::kTokens, K, -4.0f, 3.0f, 32, false);
  const int q = p->add_buffer("q", DType::kU8, Rows::kTokens, static_cast<size_t>(kernels::round_up(K, kernels::kPanelK)));
  const int scale = p->add_buffer("scale", DType::kF32, Rows::kTokens, sizeof(float));
  const int zp = p->add_buffer("zero_point", DType::kI32, Rows::kTokens, sizeof(int32_t));
  add_op(p.get(), OpKind::kQuantize, {x}, {q, scale, zp}, plan::QuantizeParams{w});
  return p;
}

std::unique_ptr<OpProblem> attention_problem(int heads, int head_dim, bool int8, bool with_mask, bool probs,
                                             backend::Shape run, bool nonfinite) {
  std::ostringstream name;
  name << (int8 ? "int8 " : "f32 ") << "attention heads " << heads << " head_dim " << head_dim
       << (with_mask ? " masked" : "") << (probs ? " +probs" : "");
  auto p = problem(name.str(), run);
  p->nonfinite = nonfinite;
  const int H = heads * head_dim;
  const int qkv = f32_input(p.get(), "qkv", Rows::kTokens, 3 * H, -2.0f, 2.0f, 41, nonfinite);
  const int mask = with_mask ? mask_input(p.get()) : -1;
  const int ctx = p->add_buffer("context", DType::kF32, Rows::kTokens, static_cast<size_t>(H) * sizeof(float));
  int pr = -1;
  if (probs) {
    pr = p->add_buffer("probs", DType::kF32, Rows::kFixed,
                       static_cast<size_t>(kMax.batch) * heads * kMax.seq * kMax.seq * sizeof(float));
    p->used[static_cast<size_t>(pr)] = static_cast<size_t>(run.batch) * heads * run.seq * run.seq * sizeof(float);
  }
  plan::AttentionParams a;
  a.heads = heads;
  a.head_dim = head_dim;
  a.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  a.int8 = int8;
  add_op(p.get(), OpKind::kAttention, {qkv, mask}, {ctx, pr}, a);
  return p;
}

// Attention with a src mask (bool, or additive float with -inf entries), one per sequence or one
// for the batch, and/or a sliding window, over the padding mask. Every kind leaves query row 1 of
// each sequence without a key (zeros).
enum class SrcMask { kNone, kBool, kFloat };
std::unique_ptr<OpProblem> attention_src_mask_problem(int head_dim, bool int8, SrcMask kind, bool per_sequence,
                                                      int window, bool probs, backend::Shape run, bool nonfinite) {
  std::unique_ptr<OpProblem> p = attention_problem(2, head_dim, int8, true, probs, run, nonfinite);
  std::ostringstream name;
  name << p->name << (kind == SrcMask::kBool ? " +bool src mask" : kind == SrcMask::kFloat ? " +float src mask" : "")
       << (kind != SrcMask::kNone && per_sequence ? " [batch, seq, seq]" : "") << (window > 0 ? " window " : "");
  if (window > 0) name << window;
  p->name = name.str();
  p->src_mask_per_sequence = per_sequence;
  plan::Op& op = p->graph.ops.back();
  plan::AttentionParams a = op.p<plan::AttentionParams>();
  a.window = window;
  op.params = a;
  const size_t pairs = (per_sequence ? static_cast<size_t>(run.batch) : 1) * run.seq * run.seq;
  std::mt19937 rng(71 + static_cast<uint32_t>(pairs));
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  auto pair_input = [&](const char* buffer_name, DType dtype) {
    const int b = p->add_buffer(buffer_name, dtype, Rows::kPairs, dtype_size(dtype));
    p->graph.buffers[static_cast<size_t>(b)].storage = plan::Storage::kInput;
    return b;
  };
  int blocked = -1, bias = -1;
  if (kind == SrcMask::kBool) {
    blocked = pair_input("src_mask_bool", DType::kU8);
    std::vector<uint8_t> v(pairs);
    for (size_t i = 0; i < pairs; ++i) v[i] = (i / run.seq) % run.seq == 1 ? 1 : unit(rng) < 0.4f;
    p->input[static_cast<size_t>(blocked)] = as_bytes(v, pairs);
  } else if (kind == SrcMask::kFloat) {
    bias = pair_input("src_mask_float", DType::kF32);
    std::vector<float> v(pairs);
    for (size_t i = 0; i < pairs; ++i)
      v[i] = (i / run.seq) % run.seq == 1 || unit(rng) < 0.3f ? -std::numeric_limits<float>::infinity()
                                                               : 4.0f * unit(rng) - 2.0f;
    p->input[static_cast<size_t>(bias)] = as_bytes(v, pairs);
  }
  op.inputs.resize(4, -1);
  op.inputs[plan::slot::kAttentionSrcMaskBool] = blocked;
  op.inputs[plan::slot::kAttentionSrcMaskFloat] = bias;
  return p;
}

const detail::TableView* table(OpProblem* p, DType dtype, int rows, int width, uint32_t seed) {
  const std::vector<float> v = uniform(static_cast<size_t>(rows) * width, -1.0f, 1.0f, seed);
  detail::TableView t;
  t.dtype = dtype;
  t.rows = rows;
  t.width = width;
  if (dtype == DType::kF32) {
    p->f32.push_back(v);
    t.data = p->f32.back().data();
  } else if (dtype == DType::kF16) {
    p->f16.emplace_back(v.size());
    for (size_t i = 0; i < v.size(); ++i) p->f16.back()[i] = float_to_half(v[i]);
    t.data = p->f16.back().data();
  } else {
    p->i8.emplace_back(v.size());
    p->f32.emplace_back(static_cast<size_t>(rows), 1.0f / 127.0f);
    for (size_t i = 0; i < v.size(); ++i) p->i8.back()[i] = static_cast<int8_t>(std::lrint(v[i] * 127.0f));
    t.data = p->i8.back().data();
    t.row_scales = p->f32.back().data();
  }
  p->tables.push_back(t);
  return &p->tables.back();
}

std::unique_ptr<OpProblem> embed_problem(DType word, DType position, bool types, bool with_norm, backend::Shape run) {
  std::ostringstream name;
  name << "embed word " << dtype_name(word) << " position " << dtype_name(position) << (types ? " +types" : "")
       << (with_norm ? " +norm" : "");
  auto p = problem(name.str(), run);
  const int H = 24, V = 50;
  plan::EmbedParams e;
  e.word = table(p.get(), word, V, H, 51);
  e.position = table(p.get(), position, kMax.seq, H, 52);
  e.token_type = types ? table(p.get(), position, 2, H, 53) : nullptr;
  e.scale = 1.5f;
  e.norm = with_norm ? norm(p.get(), H, 54) : nullptr;
  e.eps = 1e-12f;
  e.width = H;
  const size_t n = static_cast<size_t>(run.batch) * run.seq;
  const int ids = p->add_buffer("input_ids", DType::kI32, Rows::kTokens, sizeof(int32_t));
  p->graph.buffers[static_cast<size_t>(ids)].storage = plan::Storage::kInput;
  std::vector<int32_t> id(n), tt(n);
  for (size_t i = 0; i < n; ++i) id[i] = static_cast<int32_t>((i * 7 + 3) % V), tt[i] = static_cast<int32_t>(i % 2);
  p->input[static_cast<size_t>(ids)] = as_bytes(id, n);
  int tts = -1;
  if (types) {
    tts = p->add_buffer("token_type_ids", DType::kI32, Rows::kTokens, sizeof(int32_t));
    p->graph.buffers[static_cast<size_t>(tts)].storage = plan::Storage::kInput;
    p->input[static_cast<size_t>(tts)] = as_bytes(tt, n);
  }
  const int x = p->add_buffer("x", DType::kF32, Rows::kTokens, static_cast<size_t>(H) * sizeof(float));
  add_op(p.get(), OpKind::kEmbed, {ids, tts}, {x}, e);
  return p;
}

std::unique_ptr<OpProblem> rows_problem(OpKind kind, bool with_mask, backend::Shape run, bool nonfinite) {
  const int H = 19;
  auto p = problem(std::string(plan::op_kind_name(kind)) + (with_mask ? " masked" : ""), run);
  p->nonfinite = nonfinite;
  if (kind == OpKind::kTanh) {
    const int x = f32_input(p.get(), "x", Rows::kSequences, H, -4.0f, 4.0f, 61, nonfinite);
    add_op(p.get(), kind, {x}, {x}, plan::RowsParams{H});
    return p;
  }
  if (kind == OpKind::kL2Normalize) {
    const int x = f32_input(p.get(), "x", Rows::kSequences, H, -4.0f, 4.0f, 63, nonfinite);
    const int y = p->add_buffer("y", DType::kF32, Rows::kSequences, static_cast<size_t>(H) * sizeof(float));
    add_op(p.get(), kind, {x}, {y}, plan::RowsParams{H});
    return p;
  }
  const int x = f32_input(p.get(), "x", Rows::kTokens, H, -4.0f, 4.0f, 62, nonfinite);
  const int mask = with_mask ? mask_input(p.get()) : -1;
  const int y = p->add_buffer("pooled", DType::kF32, Rows::kSequences, static_cast<size_t>(H) * sizeof(float));
  add_op(p.get(), kind, kind != OpKind::kPoolFirst ? std::vector<int>{x, mask} : std::vector<int>{x}, {y},
         plan::RowsParams{H});
  return p;
}

// ---- fp16 attention: the cuda backend's tensor-core kernel (attention_mma.cu) and, with the
// probabilities, its SIMT kernel on fp16. A backend keeps an op problem's buffers in fp16 only in
// an fp16 model (cuda's storage_dtype: the first linear's weights decide), so the attention is
// followed by an fp16 output projection, as in a model. Q, K and V are multiples of 2^-8 in
// [-2, 2], exact in fp16, so the GPU and the reference attend over the same values and the
// context's error is the kernel's own: P rounded to fp16 (≤ 2^-11 · max |v| = 1e-3) and the
// context rounded to fp16 (≤ 2^-12 · 2 = 5e-4), against a context RMS of about 0.15 or more (a
// softmax over scores of standard deviation ~1.3 averages V, of deviation 1.15, over n / e^1.78
// keys: 34 of 200; a third of the masked rows are zeros): ≤ 1e-2 normalized, under the fp16
// linear's 3e-2 (op_tolerance) that the whole problem is held to.

// [batch, seq] mask: sequence 0 real but every fifth token, 1 real only in its second half and
// with holes (its first 64-key tiles wholly padded when seq > 128: the online softmax starts from
// a -inf max), 2 no real token (zeros).
std::vector<int32_t> f16_attention_mask(backend::Shape s) {
  std::vector<int32_t> m(static_cast<size_t>(s.batch) * s.seq);
  for (int b = 0; b < s.batch; ++b)
    for (int t = 0; t < s.seq; ++t) {
      const bool real = b % 3 == 0 ? t % 5 != 3 : b % 3 == 1 ? t >= s.seq / 2 && t % 3 != 1 : false;
      m[static_cast<size_t>(b) * s.seq + t] = real ? 1 : 0;
    }
  return m;
}

std::unique_ptr<OpProblem> f16_attention_problem(int heads, int head_dim, bool with_mask, bool probs, backend::Shape run,
                                                 bool nonfinite) {
  std::ostringstream name;
  name << "f16 attention heads " << heads << " head_dim " << head_dim << (with_mask ? " masked" : "")
       << (probs ? " +probs" : "") << " + f16 output projection";
  auto p = problem(name.str(), run);
  p->max = {3, run.seq};
  p->nonfinite = nonfinite;
  const int H = heads * head_dim, N = 40;
  const int qkv = p->add_buffer("qkv", DType::kF32, Rows::kTokens, static_cast<size_t>(3 * H) * sizeof(float));
  const size_t n = rows(*p, Rows::kTokens) * 3 * H;
  std::vector<float> v = uniform(n, -2.0f, 2.0f, 81 + static_cast<uint32_t>(run.seq));
  for (float& x : v) x = std::round(x * 256.0f) / 256.0f;
  if (nonfinite) poison(&v, n, 82);
  p->input[static_cast<size_t>(qkv)] = as_bytes(v, n);
  int mask = -1;
  if (with_mask) {
    mask = p->add_buffer("attention_mask", DType::kI32, Rows::kTokens, sizeof(int32_t));
    p->graph.buffers[static_cast<size_t>(mask)].storage = plan::Storage::kInput;
    p->input[static_cast<size_t>(mask)] = as_bytes(f16_attention_mask(run), static_cast<size_t>(run.batch) * run.seq);
  }
  const int ctx = p->add_buffer("context", DType::kF32, Rows::kTokens, static_cast<size_t>(H) * sizeof(float));
  int pr = -1;
  if (probs) {
    pr = p->add_buffer("probs", DType::kF32, Rows::kFixed,
                       static_cast<size_t>(p->max.batch) * heads * p->max.seq * p->max.seq * sizeof(float));
    p->used[static_cast<size_t>(pr)] = static_cast<size_t>(run.batch) * heads * run.seq * run.seq * sizeof(float);
  }
  plan::AttentionParams a;
  a.heads = heads;
  a.head_dim = head_dim;
  a.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  add_op(p.get(), OpKind::kAttention, {qkv, mask}, {ctx, pr}, a);
  const int y = p->add_buffer("y", DType::kF32, Rows::kTokens, static_cast<size_t>(N) * sizeof(float));
  add_op(p.get(), OpKind::kLinear, {ctx, -1, -1, -1}, {y},
         plan::LinearParams{linear_weights(p.get(), DType::kF16, N, H, false, 83), kernels::Activation::kNone});
  return p;
}

// On the cuda backend, the attention kernel its implementation() names for the problem's
// attention op: the tensor-core one unless attention=simt or the probabilities are written.
void check_cuda_attention_kernel(const OpProblem& p, bool probs) {
  const BackendUnderTest& b = backend_under_test();
  if (b.backend != "cuda") return;
  void* c = nullptr;
  const Status created = b.table->create(b.options, 1, &c);
  if (!created.is_ok()) return;  // run_problem reports it
  const std::string impl = b.table->implementation(c, p.graph, p.graph.ops.front());
  b.table->destroy(c);
  const auto it = b.options.find("attention");
  const bool simt = probs || (it != b.options.end() && it->second == "simt");
  INFO("cuda runs " << p.name << " on: " << impl);
  CHECK(impl.find(simt ? "(SIMT)" : "(tensor cores") != std::string::npos);
}

// `reference`, when given: the problem the reference runs instead of p (the same inputs and
// outputs; the cuda backend's fp32 attention kernels on an int8 attention op are held to the
// reference's fp32 attention, which is what they compute).
void check_problem(const OpProblem& p, const OpProblem* reference = nullptr) {
  const BackendUnderTest& b = backend_under_test();
  const plan::Op& op = p.graph.ops.back();
  INFO("backend " << b.label << ", op " << p.name << ", run batch " << p.run.batch << " seq " << p.run.seq
                  << (p.nonfinite ? ", NaN/Inf inputs" : "") << (reference ? ", against " + reference->name : ""));
  const ProblemRun ref = run_problem(backend::cpu_backend(), reference_options(), 1, reference ? *reference : p);
  REQUIRE(ref.status.is_ok());
  REQUIRE(ref.supported);
  for (const std::string& s : ref.problems) FAIL_CHECK("reference: " << s);
  for (int threads : {1, 2}) {
    INFO("threads " << threads);
    const ProblemRun got = run_problem(*b.table, b.options, threads, p);
    INFO(got.status.to_string());
    REQUIRE(got.status.is_ok());
    if (!got.supported) {
      WARN(b.label << " does not support " << p.name << " (in a session it runs on the CPU backend)");
      return;
    }
    for (const std::string& s : got.problems) FAIL_CHECK(s);
    const std::vector<int> outs = p.outputs();
    REQUIRE(got.results.size() == outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      const plan::BufferSpec& spec = p.graph.buffers[static_cast<size_t>(outs[i])];
      INFO("output " << spec.name);
      if (spec.dtype != DType::kF32) {
        CHECK(got.results[i] == ref.results[i]);  // quantized values: bit for bit
        continue;
      }
      const DType weights = op.kind == OpKind::kLinear ? op.p<plan::LinearParams>().weights->dtype : DType::kF32;
      const bool int8_attention = op.kind == OpKind::kAttention && op.p<plan::AttentionParams>().int8;
      // The quantize op's per-row scales are part of its exact semantics.
      const double tol = op.kind == OpKind::kQuantize ? 0.0 : op_tolerance(b, op.kind, weights, int8_attention);
      const Comparison c = compare_f32(reinterpret_cast<const float*>(got.results[i].data()),
                                       reinterpret_cast<const float*>(ref.results[i].data()),
                                       ref.results[i].size() / sizeof(float));
      INFO("normalized max error " << c.normalized_error << " (tolerance " << tol << "); non-finite mismatches: "
                                   << c.nonfinite_mismatches << " " << c.first_mismatch);
      CHECK(c.nonfinite_mismatches == 0);
      CHECK(c.normalized_error <= tol);
    }
  }
}

}  // namespace

TEST_CASE("conformance: layer_norm", "[conformance][ops]") {
  for (backend::Shape run : kRuns)
    for (int H : {37, 384})
      for (bool in_place : {false, true})
        for (bool nonfinite : {false, true}) check_problem(*layer_norm_problem(H, in_place, run, nonfinite));
}

TEST_CASE("conformance: linear", "[conformance][ops][int8_gemm]") {
  const kernels::Activation acts[] = {kernels::Activation::kNone, kernels::Activation::kRelu, kernels::Activation::kGelu};
  for (backend::Shape run : kRuns)
    for (DType dtype : {DType::kF32, DType::kF16, DType::kI8})
      for (auto [N, K] : {std::pair{37, 53}, std::pair{64, 64}})
        for (kernels::Activation act : acts)
          for (bool residual : {false, true}) {
            check_problem(*linear_problem(dtype, N, K, act, residual, Rows::kTokens, run, false));
            if (dtype != DType::kI8) check_problem(*linear_problem(dtype, N, K, act, residual, Rows::kTokens, run, true));
          }
  check_problem(*linear_problem(DType::kF32, 24, 24, kernels::Activation::kNone, false, Rows::kSequences, kRuns[0], false));
}

TEST_CASE("conformance: quantize", "[conformance][ops]") {
  for (backend::Shape run : kRuns)
    for (int K : {37, 64})
      for (bool multipliers : {false, true}) check_problem(*quantize_problem(K, multipliers, run));
}

TEST_CASE("conformance: attention", "[conformance][ops]") {
  for (backend::Shape run : kRuns)
    for (bool int8 : {false, true})
      for (int head_dim : {8, 32})
        for (bool mask : {false, true})
          for (bool probs : {false, true}) {
            // The cuda backend's int8 attention op runs on its fp32 kernels unless attention=int8:
            // held to the fp32 attention then (the [bf16_attention] case says why).
            const auto it = backend_under_test().options.find("attention");
            const bool fp32_kernel = backend_under_test().backend == "cuda" && int8 &&
                                     (it == backend_under_test().options.end() || it->second != "int8");
            const auto fp32 = fp32_kernel ? attention_problem(2, head_dim, false, mask, probs, run, false) : nullptr;
            check_problem(*attention_problem(2, head_dim, int8, mask, probs, run, false), fp32.get());
            if (!int8) check_problem(*attention_problem(2, head_dim, int8, mask, probs, run, true));
          }
}

TEST_CASE("conformance: attention with src masks and sliding windows", "[conformance][ops][src_mask]") {
  for (backend::Shape run : kRuns)
    for (bool int8 : {false, true})
      for (bool probs : {false, true}) {
        for (SrcMask kind : {SrcMask::kBool, SrcMask::kFloat})
          for (bool per_sequence : {false, true}) {
            check_problem(*attention_src_mask_problem(8, int8, kind, per_sequence, 0, probs, run, false));
            if (!int8) check_problem(*attention_src_mask_problem(8, int8, kind, per_sequence, 0, probs, run, true));
          }
        check_problem(*attention_src_mask_problem(32, int8, SrcMask::kNone, false, 2, probs, run, false));
        check_problem(*attention_src_mask_problem(32, int8, SrcMask::kFloat, true, 3, probs, run, false));
        if (!int8) check_problem(*attention_src_mask_problem(32, int8, SrcMask::kBool, false, 1, probs, run, true));
      }
}

TEST_CASE("conformance: embed", "[conformance][ops]") {
  for (backend::Shape run : kRuns)
    for (DType word : {DType::kF32, DType::kF16, DType::kI8})
      for (DType position : {DType::kF32, DType::kF16})
        for (bool types : {false, true})
          for (bool with_norm : {false, true}) check_problem(*embed_problem(word, position, types, with_norm, run));
}

TEST_CASE("conformance: pooling and tanh", "[conformance][ops]") {
  for (backend::Shape run : kRuns)
    for (bool nonfinite : {false, true}) {
      check_problem(*rows_problem(OpKind::kPoolMean, true, run, nonfinite));
      check_problem(*rows_problem(OpKind::kPoolMean, false, run, nonfinite));
      check_problem(*rows_problem(OpKind::kPoolFirst, false, run, nonfinite));
      check_problem(*rows_problem(OpKind::kTanh, false, run, nonfinite));
      check_problem(*rows_problem(OpKind::kPoolMax, true, run, nonfinite));
      check_problem(*rows_problem(OpKind::kPoolMax, false, run, nonfinite));
      check_problem(*rows_problem(OpKind::kL2Normalize, false, run, nonfinite));
    }
}

// A head's scores: softmax, sigmoid and identity over rows of 1, 3 and 19 labels per sequence or
// per token, with the argmax label ids (i32, compared bit for bit).
TEST_CASE("conformance: scores", "[conformance][ops]") {
  for (backend::Shape run : kRuns)
    for (bool nonfinite : {false, true})
      for (int N : {1, 3, 19})
        for (auto function : {detail::ScoreFunction::kSoftmax, detail::ScoreFunction::kSigmoid, detail::ScoreFunction::kIdentity})
          for (Rows rows : {Rows::kSequences, Rows::kTokens}) {
            auto p = problem("scores N=" + std::to_string(N) + " function " + std::to_string(static_cast<int>(function)) +
                                 (rows == Rows::kTokens ? " per token" : " per sequence"),
                             run);
            p->nonfinite = nonfinite;
            const int z = f32_input(p.get(), "logits", rows, N, -6.0f, 6.0f, 64 + N, nonfinite);
            const int s = p->add_buffer("scores", DType::kF32, rows, static_cast<size_t>(N) * sizeof(float));
            const int labels = p->add_buffer("labels", DType::kI32, rows, sizeof(int32_t));
            add_op(p.get(), OpKind::kScores, {z}, {s, labels}, plan::ScoresParams{N, function});
            check_problem(*p);
          }
}

// int8 chains as one segment: a linear (GELU) whose output only the next linear's quantize reads,
// and a LayerNorm feeding a quantize, so a backend that fuses a quantize into the kernel before it
// (the cuda backend: int8_epilogue.cu, layer_norm_quantize.cu) runs its fused kernels here. Only
// the last linear's output is compared: the intermediate rows may live where the backend put them.
// Tolerance: a last-bit difference before a quantization may move one value by a step (as for the
// cpu backend's int8 models): 3e-2. On cuda under int8_gemm=auto or mma the linears run the
// tensor-core GEMM and the quantize op between them its own kernel ("[int8_gemm]": both options).
TEST_CASE("conformance: int8 chains (quantize fused into the op before)", "[conformance][ops][int8_gemm]") {
  const BackendUnderTest& b = backend_under_test();
  for (backend::Shape run : kRuns)
    for (bool multipliers : {false, true})
      for (bool layer_norm : {false, true}) {
        const int K = 40, N1 = 37, N2 = 24;
        auto p = problem(std::string("int8 chain ") + (layer_norm ? "layer_norm -> quantize -> linear" : "linear gelu -> quantize -> linear") +
                             (multipliers ? " with multipliers" : ""),
                         run);
        const int x = f32_input(p.get(), "x", Rows::kTokens, K, -2.0f, 2.0f, 71, false);
        auto quantized = [&](const std::string& name, int in, const detail::LinearView* w) {
          const int q = p->add_buffer(name + ".q", DType::kU8, Rows::kTokens, static_cast<size_t>(kernels::round_up(w->K, kernels::kPanelK)));
          const int scale = p->add_buffer(name + ".scale", DType::kF32, Rows::kTokens, sizeof(float));
          const int zp = p->add_buffer(name + ".zero_point", DType::kI32, Rows::kTokens, sizeof(int32_t));
          add_op(p.get(), OpKind::kQuantize, {in}, {q, scale, zp}, plan::QuantizeParams{w});
          return std::vector<int>{q, -1, scale, zp};
        };
        int h = -1, width = K;
        if (layer_norm) {
          h = p->add_buffer("normed", DType::kF32, Rows::kTokens, static_cast<size_t>(K) * sizeof(float));
          add_op(p.get(), OpKind::kLayerNorm, {x}, {h}, plan::LayerNormParams{norm(p.get(), K, 72), 1e-5f, K});
        } else {
          const detail::LinearView* w1 = linear_weights(p.get(), DType::kI8, N1, K, multipliers, 73);
          h = p->add_buffer("hidden", DType::kF32, Rows::kTokens, static_cast<size_t>(N1) * sizeof(float));
          add_op(p.get(), OpKind::kLinear, quantized("l1", x, w1), {h}, plan::LinearParams{w1, kernels::Activation::kGelu});
          width = N1;
        }
        const detail::LinearView* w2 = linear_weights(p.get(), DType::kI8, N2, width, multipliers, 74);
        std::vector<int> in2 = quantized("l2", h, w2);
        in2[plan::slot::kLinearResidual] = f32_input(p.get(), "residual", Rows::kTokens, N2, -1.0f, 1.0f, 75, false);
        const int y = p->add_buffer("y", DType::kF32, Rows::kTokens, static_cast<size_t>(N2) * sizeof(float));
        add_op(p.get(), OpKind::kLinear, in2, {y}, plan::LinearParams{w2, kernels::Activation::kNone});

        INFO("backend " << b.label << ", " << p->name << ", run batch " << run.batch << " seq " << run.seq);
        const ProblemRun ref = run_problem(backend::cpu_backend(), reference_options(), 1, *p);
        REQUIRE(ref.status.is_ok());
        const ProblemRun got = run_problem(*b.table, b.options, 1, *p);
        INFO(got.status.to_string());
        REQUIRE(got.status.is_ok());
        if (!got.supported) {
          WARN(b.label << " does not support " << p->name);
          continue;
        }
        for (const std::string& s : got.problems) FAIL_CHECK(s);
        const std::vector<int> outs = p->outputs();
        const size_t last = static_cast<size_t>(std::find(outs.begin(), outs.end(), y) - outs.begin());
        REQUIRE(last < got.results.size());
        const Comparison c = compare_f32(reinterpret_cast<const float*>(got.results[last].data()),
                                         reinterpret_cast<const float*>(ref.results[last].data()),
                                         ref.results[last].size() / sizeof(float));
        INFO("normalized max error " << c.normalized_error << " " << c.first_mismatch);
        CHECK(c.nonfinite_mismatches == 0);
        CHECK(c.normalized_error <= 3e-2);
      }
}

// The shapes of issue 9's tensor-core kernel: head_dim 16 (the fixtures'), 32 (MiniLM's) and 64
// (BERT's), sequences shorter than one 16-row warp tile, one 64-key tile, two, and past a tile
// boundary, batch 1 and 3, with and without the mask; NaN and Inf inputs at seq 64. Also run as
// `encrt_conformance --backend cuda:attention=mma "[f16_attention]"` and with attention=simt
// (attention=mma refuses the probabilities, and takes fp32 attention on bf16 tensor cores, so
// those have other tags: [f16_attention_probs], [bf16_attention]).
TEST_CASE("conformance: f16 attention (tensor cores on cuda)", "[conformance][ops][f16_attention]") {
  const bool cuda = backend_under_test().backend == "cuda";
  for (int head_dim : {16, 32, 64})
    for (int seq : {1, 7, 64, 128, 200})
      for (int batch : {1, 3})
        for (bool mask : {false, true}) {
          // Batch 3 is for the GPU kernel's grid (sequences x heads in one launch). The CPU
          // backends run one (sequence, head) at a time; their batches are the fixtures' and the
          // packed cases'. (This case was half of the suite's time under qemu.)
          if (batch > 1 && !cuda && seq != 64) continue;
          const auto p = f16_attention_problem(3, head_dim, mask, false, {batch, seq}, false);
          check_cuda_attention_kernel(*p, false);
          check_problem(*p);
          if (seq == 64) check_problem(*f16_attention_problem(3, head_dim, mask, false, {batch, seq}, true));
        }
}

TEST_CASE("conformance: f16 attention with probabilities (SIMT on cuda)", "[conformance][ops][f16_attention_probs]") {
  for (int head_dim : {32, 64})
    for (bool mask : {false, true}) {
      const auto p = f16_attention_problem(2, head_dim, mask, true, {3, 70}, false);
      check_cuda_attention_kernel(*p, true);
      check_problem(*p);
    }
}

namespace {

// On the cuda backend, the GEMM its implementation() names for an int8 linear: encrt's tensor-core
// kernel unless int8_gemm=cublaslt (a GPU below sm_80 would refuse int8_gemm=mma at prepare).
void check_cuda_int8_gemm(const OpProblem& p) {
  const BackendUnderTest& b = backend_under_test();
  if (b.backend != "cuda") return;
  void* c = nullptr;
  const Status created = b.table->create(b.options, 1, &c);
  if (!created.is_ok()) return;  // run_problem reports it
  const std::string impl = b.table->implementation(c, p.graph, p.graph.ops.back());
  b.table->destroy(c);
  const auto it = b.options.find("int8_gemm");
  const bool cublaslt = it != b.options.end() && it->second == "cublaslt";
  INFO("cuda runs " << p.name << " on: " << impl);
  CHECK(impl.find(cublaslt ? "cublasLt int8" : "(tensor cores, mma.sync m16n8k32") != std::string::npos);
}

}  // namespace

// Issue 12's int8 GEMM shapes: MiniLM's (N = 384, 1152, 1536 at K = 384; N = 384 at K = 1536) at
// batch 1 (M = 128: the tensor-core kernel's 32 x 32 tiles on an H200) and batch 32 (M = 4096: its
// 64 x 64 tiles), and odd ones (N = 388, K = 1540: 4-byte copies and partial tiles; M = 129), with
// each epilogue MiniLM uses (GELU on the up projection, the residual on the others). Tolerance:
// the backend's int8 linear one (1e-4 normalized): both GEMMs sum the same integers exactly and
// apply the same fp32 operations as the reference, each rounded once, so only GELU's erff (within
// 2 ulps on the device) differs. Also run as `encrt_conformance --backend cuda:int8_gemm=mma
// "[int8_gemm]"` and with int8_gemm=cublaslt, the two GEMMs held to the same reference (the tag
// also selects the linear problems of every dtype and the int8 chains).
TEST_CASE("conformance: int8 GEMM shapes (tensor cores on cuda)", "[conformance][ops][int8_gemm][sweep]") {
  struct Shape {
    int N, K;
    kernels::Activation act;
    bool residual;
    backend::Shape run;
  };
  const kernels::Activation none = kernels::Activation::kNone, gelu = kernels::Activation::kGelu;
  const Shape shapes[] = {
      {1152, 384, none, false, {1, 128}}, {384, 384, none, true, {1, 128}},  {1536, 384, gelu, false, {1, 128}},
      {384, 1536, none, true, {1, 128}},  {384, 384, none, true, {32, 128}}, {1536, 384, gelu, false, {32, 128}},
      {384, 1536, none, true, {32, 128}}, {388, 1540, kernels::Activation::kRelu, true, {3, 43}},
      {36, 388, gelu, false, {3, 43}},    {4, 4, none, true, {1, 1}}};
  const BackendUnderTest& b = backend_under_test();
  for (const Shape& s : shapes) {
    // Batch 32 only where it is the point (the GPU's large tiles): the CPU backends' int8 GEMMs
    // have their own large-shape tests, and the scalar reference takes seconds per such shape.
    if (s.run.batch * s.run.seq > 1024 && b.backend != "cuda") continue;
    auto p = linear_problem(DType::kI8, s.N, s.K, s.act, s.residual, Rows::kTokens, s.run, false,
                            {std::max(s.run.batch, kMax.batch), std::max(s.run.seq, kMax.seq)});
    check_cuda_int8_gemm(*p);
    check_problem(*p);
  }
}

namespace {

// ---- fp32 attention on the cuda backend's bf16 tensor cores (attention_mma_kernel.cuh with fp32
// QKV): an int8 model's attention op (AttentionParams::int8) takes them under attention=auto, an
// fp32 model's only under attention=mma (auto keeps it on the SIMT kernel: no precision lost
// unasked). The fp16 cases' shapes and masks (f16_attention_mask), QKV uniform in [-2, 2] as fp32
// values (the kernel rounds them to bf16). Tolerances: op_tolerance's, argued there (0.1 for the
// int8 attention against the reference's int8 one and for fp32 attention under attention=mma;
// 1e-4 for fp32 attention on the SIMT kernel).
std::unique_ptr<OpProblem> long_attention_problem(int heads, int head_dim, bool int8, bool with_mask, backend::Shape run,
                                                  bool nonfinite) {
  std::ostringstream name;
  name << (int8 ? "int8 " : "f32 ") << "attention heads " << heads << " head_dim " << head_dim
       << (with_mask ? " masked" : "") << " seq " << run.seq;
  auto p = problem(name.str(), run);
  p->max = {3, run.seq};  // before any buffer: their sizes are planned from it
  p->nonfinite = nonfinite;
  const int H = heads * head_dim;
  const int qkv = f32_input(p.get(), "qkv", Rows::kTokens, 3 * H, -2.0f, 2.0f, 91 + static_cast<uint32_t>(run.seq), nonfinite);
  int mask = -1;
  if (with_mask) {
    mask = p->add_buffer("attention_mask", DType::kI32, Rows::kTokens, sizeof(int32_t));
    p->graph.buffers[static_cast<size_t>(mask)].storage = plan::Storage::kInput;
    p->input[static_cast<size_t>(mask)] = as_bytes(f16_attention_mask(run), static_cast<size_t>(run.batch) * run.seq);
  }
  const int ctx = p->add_buffer("context", DType::kF32, Rows::kTokens, static_cast<size_t>(H) * sizeof(float));
  plan::AttentionParams a;
  a.heads = heads;
  a.head_dim = head_dim;
  a.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  a.int8 = int8;
  add_op(p.get(), OpKind::kAttention, {qkv, mask}, {ctx, -1}, a);
  return p;
}

// On the cuda backend, the kernel implementation() names for an fp32 attention op: bf16 tensor
// cores for an int8 model's under auto or mma and for an fp32 model's under mma, else SIMT.
void check_cuda_fp32_attention_kernel(const OpProblem& p, bool int8) {
  const BackendUnderTest& b = backend_under_test();
  void* c = nullptr;
  const Status created = b.table->create(b.options, 1, &c);
  if (!created.is_ok()) return;  // run_problem reports it
  const std::string impl = b.table->implementation(c, p.graph, p.graph.ops.back());
  b.table->destroy(c);
  const auto it = b.options.find("attention");
  const std::string option = it == b.options.end() ? "auto" : it->second;
  const bool bf16 = option == "mma" || (option == "auto" && int8);
  INFO("cuda runs " << p.name << " under attention=" << option << " on: " << impl);
  CHECK(impl.find(bf16 ? "(tensor cores, mma.sync bf16)" : "(SIMT)") != std::string::npos);
}

}  // namespace

// The cuda backend's own kernels only: the host backends' attention is the cases above'. Run as
// `encrt_conformance --backend cuda "[bf16_attention]"` (int8 attention on bf16, fp32 on SIMT)
// and with cuda:attention=mma (both on bf16) and cuda:attention=simt (both on SIMT).
//
// An int8 attention op on these kernels is held to the reference's fp32 attention on the same QKV,
// not to its int8 attention: the kernels compute attention in bf16 / fp32 without the int8 one's
// quantized Q, K, P and V, so the int8 reference's own rounding is no part of their error. (The
// first GPU run held them to the int8 reference: normalized errors 0.1004-0.154, that rounding.)
TEST_CASE("conformance: fp32 attention (bf16 tensor cores on cuda)", "[conformance][ops][bf16_attention][sweep]") {
  if (backend_under_test().backend != "cuda") return;
  for (int head_dim : {16, 32, 64})
    for (int seq : {1, 7, 64, 128, 200})
      for (int batch : {1, 3})
        for (bool mask : {false, true})
          for (bool int8 : {true, false}) {
            const auto p = long_attention_problem(2, head_dim, int8, mask, {batch, seq}, false);
            check_cuda_fp32_attention_kernel(*p, int8);
            if (int8)
              check_problem(*p, long_attention_problem(2, head_dim, false, mask, {batch, seq}, false).get());
            else
              check_problem(*p);
            if (seq == 64 && !int8) check_problem(*long_attention_problem(2, head_dim, int8, mask, {batch, seq}, true));
          }
}

// The shapes of issue 12's int8 tensor-core attention kernel (attention_i8_mma.cu): head_dim 32
// (MiniLM's) and 64 (BERT's), sequences shorter than a 16-row warp tile, one and two 64-row query
// blocks, past a 32-key step, and 512 (the kernel's shared-memory bound), batch 1 and 3, with and
// without the mask; NaN and Inf inputs at seq 64. Run as `encrt_conformance --backend
// cuda:attention=int8 "[int8_attention]"` (attention=int8 refuses every other attention op, so
// the option runs only with this tag), where implementation() must name the int8 kernel. The
// tolerance is the backend's for int8 attention (op_tolerance, 0.1): the kernel's integers are
// the reference's and its fp32 steps too but for expf and the row sum's order, which can move a u
// across a rounding boundary, shifting an output by at most s_p · 127 ≤ max_j |V_j| / 255 =
// 7.8e-3 here (the kernel header's bound), about 0.05 of the context's RMS (≥ 0.15) at worst: 0.1
// covers two such moves in one output. (The emulation test, test_attention_i8_mma_emulated.cpp,
// holds each output to the bound itself and the quantized bytes to the reference's exactly.)
// The case runs on the cuda backend only: the CPU backends' int8 attention has its own tests
// against the reference (tests/kernels/), and at these lengths its moved u exceed the CPU's op
// tolerance for int8 attention (5e-3: 9.3e-3 seen at seq 64 with the x86 kernels).
TEST_CASE("conformance: int8 attention (int8 tensor cores on cuda)", "[conformance][ops][int8_attention][sweep]") {
  const BackendUnderTest& b = backend_under_test();
  if (b.backend != "cuda") return;
  const auto it = b.options.find("attention");
  const bool int8_kernel = b.backend == "cuda" && it != b.options.end() && it->second == "int8";
  for (int head_dim : {32, 64})
    for (int seq : {1, 7, 64, 128, 200, 512})
      for (int batch : {1, 3})
        for (bool mask : {false, true}) {
          const auto p = long_attention_problem(3, head_dim, true, mask, {batch, seq}, false);
          if (int8_kernel) {
            void* c = nullptr;
            if (b.table->create(b.options, 1, &c).is_ok()) {
              const std::string impl = b.table->implementation(c, p->graph, p->graph.ops.front());
              b.table->destroy(c);
              INFO("cuda runs " << p->name << " on: " << impl);
              CHECK(impl.find("(int8 tensor cores") != std::string::npos);
            }
          }
          // Without attention=int8 the op runs on the bf16 or SIMT kernel: held to fp32 attention (above).
          const auto fp32 = int8_kernel ? nullptr : long_attention_problem(3, head_dim, false, mask, {batch, seq}, false);
          check_problem(*p, fp32.get());
          if (seq == 64) {
            const auto fp32_nonfinite =
                int8_kernel ? nullptr : long_attention_problem(3, head_dim, false, mask, {batch, seq}, true);
            check_problem(*long_attention_problem(3, head_dim, true, mask, {batch, seq}, true), fp32_nonfinite.get());
          }
        }
}
