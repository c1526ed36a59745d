// ort_run: runs an ONNX BERT (inputs input_ids, attention_mask, token_type_ids, int64 [batch, seq];
// output last_hidden_state) with ONNX Runtime's C API, as `encrt bench` runs an .encrt model: one
// session (graph optimizations all on, sequential, --threads intra-op threads), --warmup runs,
// then --iters runs on the same random ids in [1000, 30000), every token real, token type 0.
// Built by ort_vs_encrt.sh for aarch64 against the libonnxruntime.so of ONNX Runtime's PyPI wheel,
// so that qemu-user can count the instructions of a run of each engine (ort_vs_encrt.sh); it
// prints the mean of the first output's values, a check that the runs computed something.
//
// usage: ort_run MODEL.onnx [--batch B] [--seq S] [--threads T] [--warmup W] [--iters N]
// The header is the C API of a newer release (Debian's libonnxruntime-dev) than the library it
// runs with: the API is asked for the library's own version (kApiVersion), whose table the newer
// header's struct starts with (ONNX Runtime's C API only ever appends to it).
#include <onnxruntime_c_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kApiVersion = 20;  // ONNX Runtime 1.20
const OrtApi* g_api = nullptr;

// Exits with the message of a failed call.
void check(OrtStatus* status, const char* what) {
  if (!status) return;
  std::fprintf(stderr, "ort_run: %s: %s\n", what, g_api->GetErrorMessage(status));
  g_api->ReleaseStatus(status);
  std::exit(1);
}

int int_option(int argc, char** argv, int* i, const char* name) {
  if (*i + 1 >= argc) {
    std::fprintf(stderr, "ort_run: %s needs a value\n", name);
    std::exit(2);
  }
  const int v = std::atoi(argv[++*i]);
  if (v < 0 || (v == 0 && std::strcmp(name, "--warmup") != 0)) {
    std::fprintf(stderr, "ort_run: bad %s %s\n", name, argv[*i]);
    std::exit(2);
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: ort_run MODEL.onnx [--batch B] [--seq S] [--threads T] [--warmup W] [--iters N]\n");
    return 2;
  }
  const char* model = argv[1];
  int batch = 1, seq = 128, threads = 1, warmup = 1, iters = 1;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--batch") batch = int_option(argc, argv, &i, "--batch");
    else if (a == "--seq") seq = int_option(argc, argv, &i, "--seq");
    else if (a == "--threads") threads = int_option(argc, argv, &i, "--threads");
    else if (a == "--warmup") warmup = int_option(argc, argv, &i, "--warmup");
    else if (a == "--iters") iters = int_option(argc, argv, &i, "--iters");
    else {
      std::fprintf(stderr, "ort_run: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  g_api = OrtGetApiBase()->GetApi(kApiVersion);
  if (!g_api) {
    std::fprintf(stderr, "ort_run: this ONNX Runtime does not offer C API version %u\n", kApiVersion);
    return 1;
  }
  OrtEnv* env = nullptr;
  check(g_api->CreateEnv(ORT_LOGGING_LEVEL_WARNING, "ort_run", &env), "CreateEnv");
  OrtSessionOptions* opts = nullptr;
  check(g_api->CreateSessionOptions(&opts), "CreateSessionOptions");
  check(g_api->SetIntraOpNumThreads(opts, threads), "SetIntraOpNumThreads");
  check(g_api->SetInterOpNumThreads(opts, 1), "SetInterOpNumThreads");
  check(g_api->SetSessionExecutionMode(opts, ORT_SEQUENTIAL), "SetSessionExecutionMode");
  check(g_api->SetSessionGraphOptimizationLevel(opts, ORT_ENABLE_ALL), "SetSessionGraphOptimizationLevel");
  OrtSession* session = nullptr;
  check(g_api->CreateSession(env, model, opts, &session), "CreateSession");

  const size_t n = static_cast<size_t>(batch) * seq;
  std::vector<int64_t> ids(n), mask(n, 1), types(n, 0);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int64_t> id(1000, 29999);
  for (auto& v : ids) v = id(rng);
  OrtMemoryInfo* cpu = nullptr;
  check(g_api->CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &cpu), "CreateCpuMemoryInfo");
  const int64_t shape[2] = {batch, seq};
  OrtValue* inputs[3] = {nullptr, nullptr, nullptr};
  std::vector<int64_t>* data[3] = {&ids, &mask, &types};
  for (int i = 0; i < 3; ++i)
    check(g_api->CreateTensorWithDataAsOrtValue(cpu, data[i]->data(), n * sizeof(int64_t), shape, 2,
                                                ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64, &inputs[i]),
          "CreateTensorWithDataAsOrtValue");
  const char* input_names[3] = {"input_ids", "attention_mask", "token_type_ids"};
  const char* output_names[1] = {"last_hidden_state"};

  double mean = 0.0;
  for (int r = 0; r < warmup + iters; ++r) {
    OrtValue* out = nullptr;
    check(g_api->Run(session, nullptr, input_names, inputs, 3, output_names, 1, &out), "Run");
    if (r + 1 == warmup + iters) {
      float* y = nullptr;
      check(g_api->GetTensorMutableData(out, reinterpret_cast<void**>(&y)), "GetTensorMutableData");
      OrtTensorTypeAndShapeInfo* info = nullptr;
      check(g_api->GetTensorTypeAndShape(out, &info), "GetTensorTypeAndShape");
      size_t count = 0;
      check(g_api->GetTensorShapeElementCount(info, &count), "GetTensorShapeElementCount");
      g_api->ReleaseTensorTypeAndShapeInfo(info);
      for (size_t i = 0; i < count; ++i) mean += y[i];
      mean /= count ? static_cast<double>(count) : 1.0;
    }
    g_api->ReleaseValue(out);
  }
  std::printf("ort_run: %s batch %d seq %d threads %d: %d warm-up + %d runs, output mean %.6f\n", model, batch, seq,
              threads, warmup, iters, mean);
  for (auto* v : inputs) g_api->ReleaseValue(v);
  g_api->ReleaseMemoryInfo(cpu);
  g_api->ReleaseSession(session);
  g_api->ReleaseSessionOptions(opts);
  g_api->ReleaseEnv(env);
  return 0;
}
