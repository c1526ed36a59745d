// Packed vs padded batches: one batch of real sentence lengths (the lines of a text file,
// tokenized with the model's own tokenizer and padded to the longest, as a serving batch is),
// run by two sessions of the same model, one with SessionOptions::padding = padded and one with
// packed, in interleaved rounds (packed first in odd rounds, padded first in even ones) so that
// the load of a shared machine falls on both alike. Reports, per backend, the latency and the
// real tokens per second (both runs do the same useful work: the batch's real tokens), min and
// median over all timed runs, and the ratio packed / padded; checks that both give the same
// pooled output. A backend with a clock of its own (cuda: CUDA events around each run's
// segment, graph replays included) also reports its device time per run, the time the GPU
// spends, which the host's latency hides behind launches and copies. A backend that is not
// available, or that cannot run packed, is reported as skipped with the reason.
//
//   encrt_packed_vs_padded MODEL [--sentences FILE] [--batch 32] [--threads T] [--rounds 5]
//                          [--iters 10] [--warmup 2] [--backends cpu,cuda] [--cuda-options N=V,...]
//
// --cuda-options: the cuda backend's options for both of its sessions (e.g. the options `encrt
// tune` took at batch 32), so that packed and padded are compared as a tuned deployment runs them.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"

namespace {

struct Options {
  std::string model;
  std::string sentences = ENCRT_SOURCE_DIR "/tests/e2e/sentences.txt";
  int batch = 32, threads = 1, rounds = 5, iters = 10, warmup = 2;
  std::vector<std::string> backends = {"cpu", "cuda"};
  std::map<std::string, std::string> cuda_options;
};

// NAME=VALUE items separated by commas into `out`; false on an item without a name and a '='.
bool parse_options(const std::string& list, std::map<std::string, std::string>* out) {
  for (size_t b = 0; b <= list.size();) {
    const size_t e = std::min(list.find(',', b), list.size());
    const std::string item = list.substr(b, e - b);
    b = e + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return false;
    (*out)[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return true;
}

int usage() {
  std::fprintf(stderr,
               "usage: encrt_packed_vs_padded MODEL [--sentences FILE] [--batch B] [--threads T] [--rounds R]\n"
               "                              [--iters N] [--warmup N] [--backends cpu,cuda] [--cuda-options N=V,...]\n");
  return 2;
}

bool parse_int(const char* text, int min, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (!end || *end || v < min || v > 1 << 20) return false;
  *out = static_cast<int>(v);
  return true;
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a.rfind("--", 0) != 0) {
      if (!o->model.empty()) return false;
      o->model = a;
      continue;
    }
    if (!v) return false;
    ++i;
    bool ok = true;
    if (a == "--sentences") o->sentences = v;
    else if (a == "--batch") ok = parse_int(v, 1, &o->batch);
    else if (a == "--threads") ok = parse_int(v, 1, &o->threads);
    else if (a == "--rounds") ok = parse_int(v, 1, &o->rounds);
    else if (a == "--iters") ok = parse_int(v, 1, &o->iters);
    else if (a == "--warmup") ok = parse_int(v, 0, &o->warmup);
    else if (a == "--cuda-options") ok = parse_options(v, &o->cuda_options);
    else if (a == "--backends") {
      o->backends.clear();
      std::string list = v;
      for (size_t b = 0; b <= list.size();) {
        const size_t e = std::min(list.find(',', b), list.size());
        if (e > b) o->backends.push_back(list.substr(b, e - b));
        b = e + 1;
      }
    } else ok = false;
    if (!ok) return false;
  }
  return !o->model.empty();
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  return "unknown";
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

// Both sessions of one backend, and the latencies of their timed runs (ms).
struct Contender {
  const char* name;
  std::unique_ptr<encrt::Session> session;
  std::vector<double> ms;
  std::vector<double> device_ms;  // Session::last_run_device_ms of each timed run (when the backend has a clock)
};

bool timed_block(Contender& c, const encrt::Inputs& in, int iters) {
  for (int i = 0; i < iters; ++i) {
    const auto a = std::chrono::steady_clock::now();
    if (encrt::Status s = c.session->run(in); !s) {
      std::fprintf(stderr, "%s run failed: %s\n", c.name, s.to_string().c_str());
      return false;
    }
    c.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
    const double device = c.session->last_run_device_ms();
    if (device >= 0) c.device_ms.push_back(device);
  }
  return true;
}

// 0: measured; 1: a failure; -1: skipped (reason printed).
int bench_backend(const encrt::Model& model, const Options& o, const std::string& backend, const encrt::Inputs& in,
                  long real_tokens) {
  for (const encrt::BackendStatus& b : encrt::available_backends())
    if (b.name == backend && !b.available) {
      std::printf("%-6s skipped: %s\n", backend.c_str(), b.detail.c_str());
      return -1;
    }
  Contender c[2] = {{"packed", nullptr, {}, {}}, {"padded", nullptr, {}, {}}};
  for (int k = 0; k < 2; ++k) {
    encrt::SessionOptions opt;
    opt.max_batch = in.batch;
    opt.max_seq = in.seq;
    opt.threads = o.threads;
    opt.backend = backend;
    opt.padding = k == 0 ? encrt::Padding::kPacked : encrt::Padding::kPadded;
    if (backend == "cuda") opt.backend_options = o.cuda_options;
    if (encrt::Status s = encrt::Session::create(model, opt, &c[k].session); !s) {
      std::printf("%-6s %s skipped: %s\n", backend.c_str(), c[k].name, s.to_string().c_str());
      if (k == 0) return -1;
      return 1;
    }
  }
  std::printf("%-6s kernels: %s\n", backend.c_str(), c[1].session->kernel_summary().c_str());
  for (Contender& x : c)
    for (int i = 0; i < o.warmup; ++i)
      if (!x.session->run(in)) return 1;
  for (int r = 0; r < o.rounds; ++r)
    for (int k = 0; k < 2; ++k)
      if (!timed_block(c[(r + k) % 2], in, o.iters)) return 1;
  if (!c[0].session->last_run_packed() || c[1].session->last_run_packed()) {
    std::fprintf(stderr, "%s: the sessions did not run the layouts asked for\n", backend.c_str());
    return 1;
  }
  // The same answers: the pooled outputs of both (bit for bit on the CPU backend).
  encrt::OutputInfo pooled;
  if (!c[0].session->output("pooled", &pooled)) return 1;
  std::vector<float> a(pooled.bytes / sizeof(float)), b(a.size());
  if (!c[0].session->copy_output("pooled", a.data(), pooled.bytes) || !c[1].session->copy_output("pooled", b.data(), pooled.bytes))
    return 1;
  double diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, static_cast<double>(std::fabs(a[i] - b[i])));
  double tps[2][2];  // [contender][min latency, median latency] as tokens per second
  for (int k = 0; k < 2; ++k) {
    const double lo = *std::min_element(c[k].ms.begin(), c[k].ms.end()), med = percentile(c[k].ms, 0.5);
    tps[k][0] = 1000.0 * static_cast<double>(real_tokens) / lo;
    tps[k][1] = 1000.0 * static_cast<double>(real_tokens) / med;
    std::printf("%-6s %s  latency ms min %9.3f  median %9.3f   real tokens/s best %10.0f  median %10.0f  (%zu runs)\n",
                backend.c_str(), c[k].name, lo, med, tps[k][0], tps[k][1], c[k].ms.size());
  }
  std::printf("%-6s packed / padded tokens per second: best %.2fx, median %.2fx; pooled max |diff| %.3g\n",
              backend.c_str(), tps[0][0] / tps[1][0], tps[0][1] / tps[1][1], diff);
  if (c[0].device_ms.size() == c[0].ms.size() && c[1].device_ms.size() == c[1].ms.size()) {
    double device_tps[2][2];
    for (int k = 0; k < 2; ++k) {
      const double lo = *std::min_element(c[k].device_ms.begin(), c[k].device_ms.end()), med = percentile(c[k].device_ms, 0.5);
      device_tps[k][0] = 1000.0 * static_cast<double>(real_tokens) / lo;
      device_tps[k][1] = 1000.0 * static_cast<double>(real_tokens) / med;
      std::printf("%-6s %s  device ms  min %9.3f  median %9.3f   real tokens/s best %10.0f  median %10.0f  (device events)\n",
                  backend.c_str(), c[k].name, lo, med, device_tps[k][0], device_tps[k][1]);
    }
    std::printf("%-6s packed / padded tokens per second on the device: best %.2fx, median %.2fx\n", backend.c_str(),
                device_tps[0][0] / device_tps[1][0], device_tps[0][1] / device_tps[1][1]);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) return usage();
  std::unique_ptr<encrt::Model> model;
  if (encrt::Status s = encrt::Model::load(o.model, &model); !s) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return 1;
  }
  std::unique_ptr<encrt::Tokenizer> tokenizer;
  if (encrt::Status s = encrt::Tokenizer::create(*model, &tokenizer); !s) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return 1;
  }
  std::ifstream file(o.sentences);
  std::vector<std::string> lines, texts;
  for (std::string line; std::getline(file, line);)
    if (!line.empty()) lines.push_back(line);
  if (lines.empty()) {
    std::fprintf(stderr, "no sentences in %s\n", o.sentences.c_str());
    return 1;
  }
  for (int i = 0; i < o.batch; ++i) texts.push_back(lines[static_cast<size_t>(i) % lines.size()]);
  encrt::BatchEncoding enc;
  if (encrt::Status s = tokenizer->encode_batch(texts, encrt::EncodeOptions{}, &enc); !s) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return 1;
  }
  long real = 0;
  int shortest = enc.seq;
  for (int b = 0; b < enc.batch; ++b) {
    int n = 0;
    for (int t = 0; t < enc.seq; ++t) n += enc.attention_mask[static_cast<size_t>(b) * enc.seq + t];
    real += n;
    shortest = std::min(shortest, n);
  }
  std::printf("cpu    %s\n", cpu_model().c_str());
  std::printf("model  %s (%s, %d layers, hidden %d)\n", o.model.c_str(), model->config().architecture.c_str(),
              model->config().num_layers, model->config().hidden_size);
  std::printf("batch  %d sentences of %s: %ld real tokens of %d x %d = %d positions (%.0f%% padding), lengths %d..%d\n",
              enc.batch, o.sentences.c_str(), real, enc.batch, enc.seq, enc.batch * enc.seq,
              100.0 * (1.0 - static_cast<double>(real) / (enc.batch * enc.seq)), shortest, enc.seq);
  std::printf("runs   %d rounds x %d runs per layout, interleaved, after %d warm-up; threads %d\n", o.rounds, o.iters,
              o.warmup, o.threads);
  const encrt::Inputs in{enc.batch, enc.seq, enc.input_ids.data(), enc.attention_mask.data(), enc.token_type_ids.data()};
  int failed = 0;
  for (const std::string& backend : o.backends) failed += bench_backend(*model, o, backend, in, real) > 0;
  return failed ? 1 : 0;
}
