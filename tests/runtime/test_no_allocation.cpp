// run() performs no heap allocation: every operator new in this test binary is counted while a
// flag is set around run().
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>

#include "support/fixtures.h"
#if defined(ENCRT_WITH_XNNPACK)
#include "backends/xnnpack/xnnpack_backend.h"
#endif
#if defined(ENCRT_WITH_CUDA)
#include "backends/cuda/cuda_backend.h"
#endif

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
  return std::malloc(size ? size : 1);
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
// Not inlined: inlined into a test, GCC's -Wmismatched-new-delete sees free() after operator new.
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using namespace encrt;

namespace {
// Allocations XNNPACK makes through encrt's allocator (its own malloc calls are not operator new).
size_t xnnpack_allocations() {
#if defined(ENCRT_WITH_XNNPACK)
  return xnnpack::allocations_so_far();
#else
  return 0;
#endif
}
// cudaMalloc, cudaFree, cudaHostAlloc and cudaFreeHost calls of the cuda backend.
long cuda_allocations() {
#if defined(ENCRT_WITH_CUDA)
  const cuda::AllocationCounts c = cuda::allocation_counts();
  return c.device_allocations + c.device_frees + c.pinned_allocations + c.pinned_frees;
#else
  return 0;
#endif
}
// The backends built into this library that this machine runs.
std::vector<std::string> backends_built() {
  std::vector<std::string> names;
  for (const BackendStatus& b : available_backends())
    if (b.available) names.push_back(b.name);
    else if (b.built) WARN("run() of backend " << b.name << " not checked here: " << b.detail);
  return names;
}
}  // namespace

TEST_CASE("run() allocates nothing", "[alloc]") {
  for (const char* name : {"bert_plain", "torch_pre_gelu_final_norm"}) {
    const test::Fixture f = test::load_fixture(name);
    for (auto type : {converter::WeightType::kF32, converter::WeightType::kF16, converter::WeightType::kI8}) {
      std::unique_ptr<Model> model;
      REQUIRE(Model::load(test::convert_fixture(f, type), &model).is_ok());
      for (int threads : {1, 2})
      for (const std::string& backend : backends_built()) {
        INFO(name << " " << converter::weight_type_name(type) << " threads " << threads << " backend " << backend);
        SessionOptions opt;
        opt.backend = backend;
        opt.max_batch = f.batch;
        opt.max_seq = f.seq;
        opt.threads = threads;
        opt.attention_layer = 1;
        opt.profile = true;
        std::unique_ptr<Session> session;
        REQUIRE(Session::create(*model, opt, &session).is_ok());
        Inputs in{f.batch, f.seq, f.ids.data.data(), f.mask.data.data(),
                  f.has_token_types ? f.token_types.data.data() : nullptr};
        REQUIRE(session->run(in).is_ok());  // warm: nothing is lazily created either way
        const size_t xnn_before = xnnpack_allocations();
        const long cuda_before = cuda_allocations();
        g_allocations = 0;
        g_counting = true;
        const Status s1 = session->run(in);
        in.seq = f.seq - 1;  // a smaller shape
        const Status s2 = session->run(in);
        g_counting = false;
        REQUIRE(s1.is_ok());
        REQUIRE(s2.is_ok());
        CHECK(g_allocations.load() == 0);
        CHECK(xnnpack_allocations() == xnn_before);
        CHECK(cuda_allocations() == cuda_before);
      }
    }
  }
}

TEST_CASE("run() with a src mask allocates nothing", "[alloc][src_mask]") {
  const test::Fixture f = test::load_fixture("torch_pre_gelu_final_norm");
  for (auto type : {converter::WeightType::kF32, converter::WeightType::kI8}) {
    std::unique_ptr<Model> model;
    REQUIRE(Model::load(test::convert_fixture(f, type), &model).is_ok());
    for (int threads : {1, 2}) {
      INFO(converter::weight_type_name(type) << " threads " << threads);
      SessionOptions opt;
      opt.max_batch = f.batch;
      opt.max_seq = f.seq;
      opt.threads = threads;
      opt.attention_layer = 1;
      opt.src_mask = true;
      std::unique_ptr<Session> session;
      REQUIRE(Session::create(*model, opt, &session).is_ok());
      const size_t S = static_cast<size_t>(f.seq);
      std::vector<uint8_t> causal(S * S);
      std::vector<float> bias(static_cast<size_t>(f.batch) * S * S, 0.5f);
      for (size_t i = 0; i < S; ++i)
        for (size_t j = 0; j < S; ++j) causal[i * S + j] = j > i;
      Inputs in{f.batch, f.seq, f.ids.data.data(), f.mask.data.data(), nullptr};
      in.src_mask_bool = causal.data();
      REQUIRE(session->run(in).is_ok());
      g_allocations = 0;
      g_counting = true;
      const Status s1 = session->run(in);
      in.src_mask_bool = nullptr;
      in.src_mask_float = bias.data();
      in.src_mask_shape = SrcMaskShape::kBatchSeqSeq;
      const Status s2 = session->run(in);
      g_counting = false;
      REQUIRE(s1.is_ok());
      REQUIRE(s2.is_ok());
      CHECK(g_allocations.load() == 0);
    }
  }
}

TEST_CASE("run() of a model with a task head allocates nothing", "[alloc][heads]") {
  // A token classifier (logits, scores and labels for every token) and a classifier on BERT's
  // pooler next to a mean-pooled output, in every weight type.
  for (const char* name : {"bert_token", "bert_seq_single"}) {
    const std::string dir = std::string(ENCRT_FIXTURES_DIR) + "/heads/" + name;
    npy::Int32Array ids, mask, types;
    REQUIRE(npy::read_int32(dir + "/ids.npy", &ids).is_ok());
    REQUIRE(npy::read_int32(dir + "/mask.npy", &mask).is_ok());
    REQUIRE(npy::read_int32(dir + "/token_type_ids.npy", &types).is_ok());
    const int batch = static_cast<int>(ids.shape[0]), seq = static_cast<int>(ids.shape[1]);
    for (auto type : {converter::WeightType::kF32, converter::WeightType::kF16, converter::WeightType::kI8}) {
      converter::ConvertOptions copt;
      copt.source_dir = dir;
      copt.weight_type = type;
      copt.calibration_threads = 1;
      copt.output_path = test::tmp_path(std::string("alloc_head_") + name + "." + converter::weight_type_name(type) + ".encrt");
      REQUIRE(converter::convert(copt).is_ok());
      std::unique_ptr<Model> model;
      REQUIRE(Model::load(copt.output_path, &model).is_ok());
      for (const std::string& backend : backends_built()) {
        INFO(name << " " << converter::weight_type_name(type) << " backend " << backend);
        SessionOptions opt;
        opt.backend = backend;
        opt.max_batch = batch;
        opt.max_seq = seq;
        opt.threads = 2;
        std::unique_ptr<Session> session;
        REQUIRE(Session::create(*model, opt, &session).is_ok());
        Inputs in{batch, seq, ids.data.data(), mask.data.data(), types.data.data()};
        REQUIRE(session->run(in).is_ok());
        const size_t xnn_before = xnnpack_allocations();
        const long cuda_before = cuda_allocations();
        g_allocations = 0;
        g_counting = true;
        const Status s1 = session->run(in);
        in.seq = seq - 1;
        const Status s2 = session->run(in);
        g_counting = false;
        REQUIRE(s1.is_ok());
        REQUIRE(s2.is_ok());
        CHECK(g_allocations.load() == 0);
        CHECK(xnnpack_allocations() == xnn_before);
        CHECK(cuda_allocations() == cuda_before);
      }
    }
  }
}

TEST_CASE("the allocation counter sees allocations", "[alloc]") {
  g_allocations = 0;
  g_counting = true;
  auto* p = new std::vector<int>(100);
  g_counting = false;
  delete p;
  CHECK(g_allocations.load() >= 2);
}

TEST_CASE("a packed run() allocates nothing", "[alloc][packed]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  for (auto type : {converter::WeightType::kF32, converter::WeightType::kI8}) {
    std::unique_ptr<Model> model;
    REQUIRE(Model::load(test::convert_fixture(f, type), &model).is_ok());
    for (int threads : {1, 2})
    for (const std::string& backend : backends_built()) {
      INFO(converter::weight_type_name(type) << " threads " << threads << " backend " << backend);
      SessionOptions opt;
      opt.backend = backend;
      opt.max_batch = f.batch;
      opt.max_seq = f.seq;
      opt.threads = threads;
      opt.padding = Padding::kPacked;
      std::unique_ptr<Session> session;
      const Status created = Session::create(*model, opt, &session);
      if (created.code() == StatusCode::kUnsupported) {  // a backend that does not pack (test_packed_batches.cpp)
        WARN("backend " << backend << " does not run packed: " << created.message());
        continue;
      }
      REQUIRE(created.is_ok());
      Inputs in{f.batch, f.seq, f.ids.data.data(), f.mask.data.data(), nullptr};
      REQUIRE(session->run(in).is_ok());
      const long cuda_before = cuda_allocations();
      g_allocations = 0;
      g_counting = true;
      const Status s1 = session->run(in);
      in.batch = f.batch - 1;  // a smaller batch
      const Status s2 = session->run(in);
      g_counting = false;
      REQUIRE(s1.is_ok());
      REQUIRE(s2.is_ok());
      CHECK(session->last_run_packed());
      CHECK(g_allocations.load() == 0);
      CHECK(cuda_allocations() == cuda_before);
    }
  }
}
