// An int8 model's linears run as fp16 ones (model/dequantized_linears.h; the backends' option
// int8_linears): the fp16 weights are the int8 file's (within half a quantization step of the fp32
// model's weights, plus half's rounding), the graph has no quantize op and float attention, and the
// hidden states are at least as close to PyTorch as int8 arithmetic's.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/half.h"
#include "kernels/kernel_types.h"
#include "model/dequantized_linears.h"
#include "plan/encoder_graph.h"
#include "session/session_impl.h"
#include "support/fixtures.h"

using namespace encrt;

namespace {

std::unique_ptr<Model::Impl> load_impl(const std::string& path) {
  auto impl = std::make_unique<Model::Impl>();
  impl->file = std::make_unique<MappedFile>();
  REQUIRE(impl->file->open(path).is_ok());
  REQUIRE(detail::load_model_buffer(impl->file->data(), impl->file->size(), path, impl.get()).is_ok());
  return impl;
}

std::vector<std::pair<const detail::LinearView*, const detail::LinearView*>> linear_pairs(const detail::ModelImpl& a,
                                                                                      const detail::ModelImpl& b) {
  std::vector<std::pair<const detail::LinearView*, const detail::LinearView*>> out;
  for (size_t l = 0; l < a.layers.size(); ++l) {
    out.push_back({&a.layers[l].qkv, &b.layers[l].qkv});
    out.push_back({&a.layers[l].attn_out, &b.layers[l].attn_out});
    out.push_back({&a.layers[l].ffn_up, &b.layers[l].ffn_up});
    out.push_back({&a.layers[l].ffn_down, &b.layers[l].ffn_down});
  }
  if (a.pooler.packed) out.push_back({&a.pooler, &b.pooler});
  if (a.head.classifier.packed) out.push_back({&a.head.classifier, &b.head.classifier});
  return out;
}

SessionOptions options_of(const test::Fixture& f, const std::string& int8_linears) {
  SessionOptions o;
  o.max_batch = f.batch;
  o.max_seq = f.seq;
  o.backend = "cpu";
  if (!int8_linears.empty()) o.backend_options["int8_linears"] = int8_linears;
  return o;
}

struct TokenCosines {
  double mean = 0.0, min = 1.0;
};
TokenCosines token_cosines(const float* got, const test::Fixture& f) {
  TokenCosines c;
  int n = 0;
  for (int t = 0; t < f.batch * f.seq; ++t) {
    if (f.mask.data[static_cast<size_t>(t)] == 0) continue;
    const size_t off = static_cast<size_t>(t) * f.hidden;
    const double cos = test::cosine(got + off, f.hidden_state.data.data() + off, f.hidden);
    c.mean += cos, c.min = std::min(c.min, cos), ++n;
  }
  c.mean /= n;
  return c;
}

}  // namespace

TEST_CASE("int8 linears as fp16: the weights are the int8 file's, within half a step of the fp32 model's",
          "[int8_linears]") {
  for (const std::string& name : test::fixture_names()) {
    const test::Fixture f = test::load_fixture(name);
    const auto fp32 = load_impl(test::convert_fixture(f, converter::WeightType::kF32, f.has_pooler ? "pooler" : ""));
    const auto int8 = load_impl(test::convert_fixture(f, converter::WeightType::kI8, f.has_pooler ? "pooler" : ""));
    const detail::DequantizedLinears& d = int8->dequantized_linears();
    CHECK(&d == &int8->dequantized_linears());  // once per model
    CHECK(d.bytes() == 0);                      // no panels until a backend reads them
    size_t int8_linears = 0, checked = 0;
    for (const auto& [w8, w32] : linear_pairs(*int8, *fp32)) {
      INFO(name);
      REQUIRE(w32->dtype == DType::kF32);
      if (w8->dtype != DType::kI8) {  // kept in fp16 by the guardrail: nothing to dequantize
        CHECK(d.find(*w8) == nullptr);
        continue;
      }
      ++int8_linears;
      const detail::LinearView* v = d.find(*w8);
      REQUIRE(v != nullptr);
      CHECK(&d.effective(*w8) == v);
      REQUIRE(v->dtype == DType::kF16);
      CHECK(v->dequantized_from == w8);
      CHECK(v->packed == nullptr);
      REQUIRE(d.materialize(*v));
      REQUIRE(v->packed != nullptr);
      const void* first = v->packed;
      CHECK(d.materialize(*v));  // once: the same panels
      CHECK(v->packed == first);
      CHECK_FALSE(d.materialize(*w8));  // not a view of these
      REQUIRE(v->N == w8->N);
      REQUIRE(v->K == w8->K);
      CHECK(v->bias == w8->bias);
      CHECK(v->packed_bytes == kernels::panel_f32_size(v->N, v->K) * sizeof(uint16_t));
      const auto* h = static_cast<const uint16_t*>(v->packed);
      const auto* x = static_cast<const float*>(w32->packed);
      double worst = 0.0;
      for (int n = 0; n < v->N; ++n) {
        for (int k = 0; k < v->K; ++k) {
          const size_t at = kernels::panel_f32_index(n, k, v->K);
          const double got = half_to_float(h[at]), want = x[at];
          // The int8 weight is round(W / (s_w · m)) of the smoothed weight: within half a step
          // s_w · m of W once multiplied back, then rounded to half (2^-11 relative).
          const double m = w8->activation_multipliers ? w8->activation_multipliers[k] : 1.0;
          const double step = static_cast<double>(w8->scales[n]) * m;
          const double bound = 0.5 * step * (1.0 + 1e-5) + std::fabs(got) * std::ldexp(1.0, -11) + 1e-30;
          worst = std::max(worst, std::fabs(got - want) / bound);
          ++checked;
        }
        // The padding columns of the last panel are zeros (the CPU GEMMs read whole panels).
        if (n == v->N - 1)
          for (int p = v->N; p % kernels::kPanelN != 0; ++p)
            for (int k = 0; k < v->K; ++k) CHECK(h[kernels::panel_f32_index(p, k, v->K)] == 0);
      }
      INFO("linear " << v->N << " x " << v->K << ": worst error / bound " << worst);
      CHECK(worst <= 1.0);
      CHECK(worst > 0.05);  // the int8 step is there: the weights are not the fp32 model's
    }
    CHECK(d.count() == int8_linears);
    CHECK(checked > 0);
    CHECK(d.bytes() >= checked * sizeof(uint16_t));
    // Each weight as the cuda backend's kernel computes it (dequantize_weights_kernel.cuh: the
    // emulation tests hold the kernel to dequantized_weight bit for bit).
    for (const auto& [w8, w32] : linear_pairs(*int8, *fp32)) {
      const detail::LinearView* v = d.find(*w8);
      if (!v) continue;
      const auto* h = static_cast<const uint16_t*>(v->packed);
      const auto* q = static_cast<const int8_t*>(w8->packed);
      int mismatches = 0;
      for (int n = 0; n < v->N; ++n)
        for (int k = 0; k < v->K; ++k)
          mismatches += h[kernels::panel_f32_index(n, k, v->K)] !=
                        detail::dequantized_weight(q[kernels::panel_i8_index(n, k, v->K)], w8->scales[n],
                                                   w8->activation_multipliers ? w8->activation_multipliers[k] : 1.0f);
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("int8 linears as fp16: the graph has no quantize op, fp16 linears and float attention",
          "[int8_linears]") {
  const test::Fixture f = test::load_fixture("torch_post_gelu_3layer");
  std::unique_ptr<Model> model;
  REQUIRE(Model::load(test::convert_fixture(f, converter::WeightType::kI8), &model).is_ok());
  const auto impl = load_impl(test::convert_fixture(f, converter::WeightType::kI8));
  for (const std::string& option : {std::string(""), std::string("int8"), std::string("f16")}) {
    INFO("int8_linears=" << option);
    detail::SessionImpl s;
    REQUIRE(detail::build_session(*impl, options_of(f, option), true, &s).is_ok());
    const bool f16 = option == "f16";
    CHECK(s.dequantized_int8 == f16);
    for (const plan::Op& op : s.graph.ops)  // the CPU backend reads the panels: made at session creation
      if (op.kind == plan::OpKind::kLinear && op.p<plan::LinearParams>().weights->dequantized_from)
        CHECK(op.p<plan::LinearParams>().weights->packed != nullptr);
    int quantize = 0, int8_linears = 0, f16_linears = 0, int8_attention = 0;
    for (const plan::Op& op : s.graph.ops) {
      quantize += op.kind == plan::OpKind::kQuantize;
      if (op.kind == plan::OpKind::kLinear) {
        const DType d = op.p<plan::LinearParams>().weights->dtype;
        int8_linears += d == DType::kI8;
        f16_linears += d == DType::kF16;
      }
      if (op.kind == plan::OpKind::kAttention) int8_attention += op.p<plan::AttentionParams>().int8;
    }
    CHECK(quantize == (f16 ? 0 : int8_linears));
    CHECK((f16 ? int8_linears : f16_linears) == 0);
    CHECK((f16 ? f16_linears : int8_linears) == 4 * static_cast<int>(impl->layers.size()));
    if (f16) CHECK(int8_attention == 0);
    if (!f16 && impl->spec.int8_attention) CHECK(int8_attention == static_cast<int>(impl->layers.size()));
  }
  // An fp16 model has nothing to dequantize; a wrong value is refused, naming the option.
  const auto f16_model = load_impl(test::convert_fixture(f, converter::WeightType::kF16));
  detail::SessionImpl s;
  REQUIRE(detail::build_session(*f16_model, options_of(f, "f16"), true, &s).is_ok());
  CHECK_FALSE(s.dequantized_int8);
  std::unique_ptr<Session> bad;
  const Status st = Session::create(*model, options_of(f, "fp16"), &bad);
  CHECK_FALSE(st.is_ok());
  CHECK(st.to_string().find("int8_linears") != std::string::npos);
}

TEST_CASE("int8 linears as fp16: hidden states at least as close to PyTorch as int8 arithmetic", "[int8_linears][golden]") {
  for (const std::string& name : test::fixture_names()) {
    const test::Fixture f = test::load_fixture(name);
    std::unique_ptr<Model> model;
    REQUIRE(Model::load(test::convert_fixture(f, converter::WeightType::kI8), &model).is_ok());
    const TokenCosines int8 = token_cosines(test::run_fixture(*model, f, options_of(f, "int8"))->last_hidden_state(), f);
    const auto session = test::run_fixture(*model, f, options_of(f, "f16"));
    const TokenCosines f16 = token_cosines(session->last_hidden_state(), f);
    INFO(name << ": token cosine against PyTorch, int8 arithmetic mean " << int8.mean << " min " << int8.min
              << "; fp16 linears mean " << f16.mean << " min " << f16.min << " (" << session->kernel_summary() << ")");
    CHECK(session->kernel_summary().find("int8 linears run as fp16") != std::string::npos);
    CHECK(f16.mean >= int8.mean - 1e-4);
    CHECK(f16.min >= int8.min - 1e-4);
    CHECK(f16.min >= 0.99);
  }
}
