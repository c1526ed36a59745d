// encrt_model_floor MODEL [--batch B] [--seq S] [--threads T] [--isa LEVEL|all] [--rounds R]
//                         [--iters N] [--warmup N] [--floor-only] [--json]
//
// How far a whole model's run on the CPU backend is from the floor that this CPU's measured peak
// sets (the brief's "within 1.25× of the floor that the CPU's probe-measured peak sets"), in one
// process: the register-only probes of peak_probe/ measure the core's peak for each kind of
// product, the model's products are counted from its file, and the same process then times
// Session::run.
//
// The floor is the time the products alone would take at the peak of the fastest instruction the
// kernel level has for their type, on every thread at once, and nothing else; except that a linear
// can be no faster than reading its weights (a roofline: at short sequences there are few
// products per weight byte, and streaming the weights bounds the run):
//   products   each encoder layer's linears: tokens × N × K of every 2-D `layers.*` weight, at the
//              weight's type; the attention's two products (Q·Kᵀ, P·V): sequences × 2 × hidden ×
//              the (query, key) pairs the attention window leaves, at int8 for an int8 attention
//              and fp32 otherwise. Embedding gathers, LayerNorms, softmax, quantization, GELU,
//              pooling and task heads (a few hundred products per sequence) count nothing.
//   int8 peak  amx: tdpbusd; avx512vnni, avx512fp16: vpdpbusd zmm; avx2vnni: vpdpbusd ymm; avx2:
//              the fastest of the AVX2 routes (the saturating vpmaddubsw one, exact for 7-bit
//              weights) whatever route the kernels take; avx512: the saturating route on zmm
//   fp16 peak  vfmadd231ph zmm where the level has AVX512-FP16, else the fp32 peak (the weights
//              are widened)
//   fp32 peak  vfmadd231ps zmm at the AVX-512 levels, ymm at the AVX2 ones
//   aarch64    int8 usmmla at neoni8mm, sdot at neondot and neonfp16, smull + smlsl + sadalp
//              (the neon kernel's route) at neon; fp16 fmla .8h at neonfp16 and above, else fp32
//              fmla .4s
//   weights    the linears of each type: max(2 · products / peak, weight bytes / read bandwidth),
//              the bandwidth measured by streaming a buffer as large as all the linears' weights
//              (peak_probe/read_bandwidth.h: the level of the memory hierarchy that holds them)
// A level without a probe for a type the model uses (scalar) has no floor, and says so. With T
// threads the floor is the one-core floor / T (perfect scaling, of the bandwidth too).
//
// Time is measured as `encrt bench` measures it (random ids in [1000, vocab), every token real),
// as R rounds of N runs after a warm-up; best-of is the headline, the median beside it. A second
// session with profiling on then splits the time by op kind, so that each kind's distance to its
// own floor shows where the rest goes. --isa all runs every SIMD level the CPU supports in one
// process, their rounds interleaved, and ends with a table of them (--json: an array).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/host_info.h"
#include "encrt/encrt.hpp"
#include "kernels/isa.h"
#include "kernels/kernel_table.h"
#include "peaks.h"
#include "read_bandwidth.h"

namespace {

using encrt::Inputs;
using encrt::Model;
using encrt::OpProfile;
using encrt::Session;
using encrt::SessionOptions;
using encrt::Status;
namespace kernels = encrt::kernels;

struct Options {
  std::string model;
  int batch = 1, seq = 128, threads = 1, rounds = 5, iters = 20, warmup = 5;
  std::string isa;  // "" = this CPU's (or ENCRT_ISA's) level; "all" = every SIMD level it runs
  bool floor_only = false, json = false;
};

constexpr const char* kUsage =
    "usage: encrt_model_floor MODEL [--batch B] [--seq S] [--threads T] [--isa LEVEL|all] [--rounds R]\n"
    "                         [--iters N] [--warmup N] [--floor-only] [--json]\n";

// A bad command line: why, and the usage, on stderr; exit status 2.
int usage(const char* why) {
  std::fprintf(stderr, "encrt_model_floor: %s\n%s", why, kUsage);
  return 2;
}

bool parse_int(const char* text, int lo, int hi, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

// Parses argv; on a bad argument prints why and returns false.
bool parse_options(int argc, char** argv, Options* o, int* status) {
  struct IntFlag {
    const char* name;
    int* value;
    int lo, hi;
  };
  const IntFlag ints[] = {{"--batch", &o->batch, 1, 4096},   {"--seq", &o->seq, 1, 1 << 16},
                          {"--threads", &o->threads, 1, 1024}, {"--rounds", &o->rounds, 1, 1000},
                          {"--iters", &o->iters, 1, 100000},   {"--warmup", &o->warmup, 0, 100000}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") { o->json = true; continue; }
    if (a == "--floor-only") { o->floor_only = true; continue; }
    if (a == "--help" || a == "-h") {
      std::printf("%s(the header of benchmarks/model_floor/model_floor.cpp defines the floor)\n", kUsage);
      *status = 0;
      return false;
    }
    if (a == "--isa") {
      if (i + 1 >= argc) { *status = usage("--isa needs a level"); return false; }
      o->isa = argv[++i];
      continue;
    }
    bool matched = false;
    for (const IntFlag& f : ints) {
      if (a != f.name) continue;
      matched = true;
      if (i + 1 >= argc || !parse_int(argv[i + 1], f.lo, f.hi, f.value)) {
        const std::string why = a + " needs an integer in [" + std::to_string(f.lo) + ", " + std::to_string(f.hi) + "]";
        *status = usage(why.c_str());
        return false;
      }
      ++i;
    }
    if (matched) continue;
    if (a.rfind("--", 0) == 0) { *status = usage(("unknown option " + a).c_str()); return false; }
    if (!o->model.empty()) { *status = usage("one model only"); return false; }
    o->model = a;
  }
  if (o->model.empty()) { *status = usage("no model given"); return false; }
  return true;
}

// The products (multiply-adds) of one run, by the type they run in.
struct Products {
  double linear_i8 = 0, linear_f16 = 0, linear_f32 = 0;
  double bytes_i8 = 0, bytes_f16 = 0, bytes_f32 = 0;  // the linears' weights, per run (read once)
  double attention = 0;  // at attention_i8 ? int8 : fp32
  bool attention_i8 = false;
  int linears = 0;  // 2-D layer weights counted
};

// (query, key) pairs of one sequence of `seq` tokens when each query sees the keys within
// ±window (0: all).
double attention_pairs(int seq, int window) {
  if (window <= 0 || window >= seq) return static_cast<double>(seq) * seq;
  double pairs = 0;
  for (int i = 0; i < seq; ++i) pairs += std::min(seq - 1, i + window) - std::max(0, i - window) + 1;
  return pairs;
}

Products count_products(const Model& model, int batch, int seq) {
  Products p;
  const double tokens = static_cast<double>(batch) * seq;
  for (const encrt::TensorInfo& t : model.tensors()) {
    if (t.shape.size() != 2 || t.name.rfind("layers.", 0) != 0) continue;
    if (t.name.size() < 7 || t.name.compare(t.name.size() - 7, 7, ".weight") != 0) continue;
    const double nk = static_cast<double>(t.shape[0]) * static_cast<double>(t.shape[1]);
    ++p.linears;
    if (t.dtype == "i8") p.linear_i8 += tokens * nk, p.bytes_i8 += nk;
    else if (t.dtype == "f16") p.linear_f16 += tokens * nk, p.bytes_f16 += 2 * nk;
    else p.linear_f32 += tokens * nk, p.bytes_f32 += 4 * nk;
  }
  const encrt::ModelConfig& c = model.config();
  p.attention_i8 = c.attention_precision == "int8";
  p.attention = static_cast<double>(batch) * c.num_layers * 2.0 * c.hidden_size *
                attention_pairs(seq, c.attention_window);
  return p;
}

// The peak (ops/s, 2 per product) each type runs at on a level with `features`, and the probe
// it comes from; 0 and "none" where no probe applies.
struct LevelPeaks {
  double i8 = 0, f16 = 0, f32 = 0;
  std::string i8_probe = "none", f16_probe = "none", f32_probe = "none";
};

LevelPeaks level_peaks(const encrt::bench::Peaks& m, kernels::IsaFeatures f) {
  LevelPeaks l;
  if (f & kernels::kIsaNeon) {
    l.f32 = m.fmla_4s_flops, l.f32_probe = "fmla .4s";
    if ((f & kernels::kIsaNeonFp16) && m.fmla_8h_flops > 0)
      l.f16 = m.fmla_8h_flops, l.f16_probe = "fmla .8h";
    else
      l.f16 = l.f32, l.f16_probe = l.f32_probe;
    if ((f & kernels::kIsaNeonI8mm) && m.usmmla_ops > 0)
      l.i8 = m.usmmla_ops, l.i8_probe = "usmmla";
    else if ((f & kernels::kIsaNeonDot) && m.sdot_ops > 0)
      l.i8 = m.sdot_ops, l.i8_probe = "sdot";
    else if (m.smull_sadalp_ops > 0)
      l.i8 = m.smull_sadalp_ops, l.i8_probe = "smull+smlsl+sadalp";
    return l;
  }
  const bool avx2 = (f & kernels::kIsaAvx2) != 0, avx512 = avx2 && (f & kernels::kIsaAvx512) != 0;
  if (avx512) {
    l.f32 = m.fma_zmm_flops, l.f32_probe = "vfmadd231ps zmm";
  } else if (avx2) {
    l.f32 = m.fma_ymm_flops, l.f32_probe = "vfmadd231ps ymm";
  }
  if (avx512 && (f & kernels::kIsaAvx512Fp16) && m.fma_ph_zmm_flops > 0) {
    l.f16 = m.fma_ph_zmm_flops, l.f16_probe = "vfmadd231ph zmm";
  } else {
    l.f16 = l.f32, l.f16_probe = l.f32_probe;
  }
  if ((f & kernels::kIsaAmxInt8) && m.tdpbusd_ops > 0) {
    l.i8 = m.tdpbusd_ops, l.i8_probe = "tdpbusd";
  } else if (avx512 && (f & kernels::kIsaAvx512Vnni) && m.vpdpbusd_zmm_ops > 0) {
    l.i8 = m.vpdpbusd_zmm_ops, l.i8_probe = "vpdpbusd zmm";
  } else if (avx2 && (f & kernels::kIsaAvxVnni) && m.vpdpbusd_ymm_ops > 0) {
    l.i8 = m.vpdpbusd_ymm_ops, l.i8_probe = "vpdpbusd ymm (AVX-VNNI)";
  } else if (avx512 && m.i8_saturating_zmm_ops > 0) {
    l.i8 = m.i8_saturating_zmm_ops, l.i8_probe = "vpmaddubsw+vpmaddwd+vpaddd zmm (the fastest AVX-512 route)";
  } else if (avx2) {
    l.i8 = std::max({m.i8_widened_ymm_ops, m.i8_saturating_ymm_ops, m.i8_signed_ymm_ops});
    l.i8_probe = l.i8 == m.i8_saturating_ymm_ops ? "vpmaddubsw+vpmaddwd+vpaddd ymm (the fastest AVX2 route)"
                 : l.i8 == m.i8_widened_ymm_ops  ? "vpmaddwd+vpaddd ymm (the fastest AVX2 route)"
                                                 : "vpsignb+vpmaddubsw+vpmaddwd+vpaddd ymm (the fastest AVX2 route)";
  }
  return l;
}

// Milliseconds that `products` take at `peak` ops/s on `threads` cores; -1 when there is no peak.
double floor_ms(double products, double peak, int threads) {
  if (products <= 0) return 0;
  if (peak <= 0) return -1;
  return 2.0 * products / (peak * threads) * 1e3;
}

// Milliseconds that reading `bytes` takes at `bandwidth` bytes/s per core on `threads` cores.
double read_ms(double bytes, double bandwidth, int threads) {
  return bytes <= 0 || bandwidth <= 0 ? 0 : bytes / (bandwidth * threads) * 1e3;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

// "[linear x86::qu8s8_gemm_32x32__amx]" in "layers.0.ffn.up [linear ...]" -> "linear".
std::string op_kind(const std::string& profile_name) {
  const size_t open = profile_name.find('[');
  if (open == std::string::npos) return profile_name;
  const size_t end = profile_name.find_first_of(" ]", open + 1);
  return profile_name.substr(open + 1, end == std::string::npos ? std::string::npos : end - open - 1);
}

Status make_session(const Model& model, const Options& o, const std::string& isa, bool profile,
                    std::unique_ptr<Session>* out) {
  SessionOptions opt;
  opt.max_batch = o.batch;
  opt.max_seq = o.seq;
  opt.threads = o.threads;
  opt.backend = "cpu";
  if (!isa.empty()) opt.backend_options["isa"] = isa;
  opt.profile = profile;
  return Session::create(model, opt, out);
}

// One kernel level: its floor, and with timing its runs and its profile.
struct LevelRun {
  std::string level;  // the preset's name, or the CPU's features joined with '+'
  std::string isa;    // the session's isa option ("" = the default table)
  LevelPeaks peaks;
  double fl_linear = 0, fl_att = 0, fl_total = 0;
  double fl_linear_compute = 0, fl_linear_read = 0;  // the two sides of the linears' roofline, summed
  bool has_floor = false;
  std::unique_ptr<Session> session;
  std::string kernel_summary;
  std::vector<double> ms;
  std::vector<std::pair<std::string, double>> by_kind;  // ms per run, largest first

  double best() const { return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end()); }
  double kind_ms(const char* kind) const {
    for (const auto& [k, t] : by_kind)
      if (k == kind) return t;
    return 0.0;
  }
};

void set_floor(LevelRun* r, const Products& p, const encrt::bench::Peaks& measured, double bandwidth,
               kernels::IsaFeatures features, int threads) {
  r->peaks = level_peaks(measured, features);
  const double fl_i8 = floor_ms(p.linear_i8, r->peaks.i8, threads);
  const double fl_f16 = floor_ms(p.linear_f16, r->peaks.f16, threads);
  const double fl_f32 = floor_ms(p.linear_f32, r->peaks.f32, threads);
  r->fl_att = floor_ms(p.attention, p.attention_i8 ? r->peaks.i8 : r->peaks.f32, threads);
  r->has_floor = fl_i8 >= 0 && fl_f16 >= 0 && fl_f32 >= 0 && r->fl_att >= 0;
  const double rd_i8 = read_ms(p.bytes_i8, bandwidth, threads), rd_f16 = read_ms(p.bytes_f16, bandwidth, threads),
               rd_f32 = read_ms(p.bytes_f32, bandwidth, threads);
  r->fl_linear_compute = fl_i8 + fl_f16 + fl_f32;
  r->fl_linear_read = rd_i8 + rd_f16 + rd_f32;
  // Per type, the slower of its products and its weights (every linear of a type has the same
  // products per weight byte, so this is the per-linear roofline summed).
  r->fl_linear = std::max(fl_i8, rd_i8) + std::max(fl_f16, rd_f16) + std::max(fl_f32, rd_f32);
  r->fl_total = r->fl_linear + r->fl_att;
}

void print_json(const LevelRun& r, const Options& o, const Products& p, double bandwidth,
                const encrt::host::HostInfo& host) {
  std::printf("{\"cpu\": \"%s\", \"virtual_machine\": %s, \"emulated\": %s, \"level\": \"%s\", \"model\": \"%s\", "
              "\"batch\": %d, \"seq\": %d, \"threads\": %d, ",
              json_escape(host.cpu_model).c_str(), host.virtual_machine ? "true" : "false",
              host.emulated ? "true" : "false", r.level.c_str(), json_escape(o.model).c_str(), o.batch, o.seq, o.threads);
  std::printf("\"peaks_gops\": {\"i8\": %.9g, \"f16\": %.9g, \"f32\": %.9g}, \"probes\": {\"i8\": \"%s\", "
              "\"f16\": \"%s\", \"f32\": \"%s\"}, ",
              r.peaks.i8 * 1e-9, r.peaks.f16 * 1e-9, r.peaks.f32 * 1e-9, r.peaks.i8_probe.c_str(),
              r.peaks.f16_probe.c_str(), r.peaks.f32_probe.c_str());
  std::printf("\"products\": {\"linear_i8\": %.0f, \"linear_f16\": %.0f, \"linear_f32\": %.0f, \"attention\": %.0f, "
              "\"attention_i8\": %s}, ",
              p.linear_i8, p.linear_f16, p.linear_f32, p.attention, p.attention_i8 ? "true" : "false");
  std::printf("\"weight_bytes\": {\"i8\": %.0f, \"f16\": %.0f, \"f32\": %.0f}, \"read_gbs\": %.9g, ", p.bytes_i8,
              p.bytes_f16, p.bytes_f32, bandwidth * 1e-9);
  if (r.has_floor)
    std::printf("\"floor_ms\": {\"total\": %.9g, \"linear\": %.9g, \"attention\": %.9g, \"linear_compute\": %.9g, "
                "\"linear_read\": %.9g}",
                r.fl_total, r.fl_linear, r.fl_att, r.fl_linear_compute, r.fl_linear_read);
  else
    std::printf("\"floor_ms\": null");
  if (!o.floor_only) {
    const double best = r.best(), median = median_of(r.ms);
    std::printf(", \"kernels\": \"%s\", \"runs\": %zu, \"best_ms\": %.9g, \"median_ms\": %.9g", r.kernel_summary.c_str(),
                r.ms.size(), best, median);
    if (r.has_floor)
      std::printf(", \"best_over_floor\": %.6g, \"median_over_floor\": %.6g", best / r.fl_total, median / r.fl_total);
    std::printf(", \"profile_ms\": {");
    for (size_t i = 0; i < r.by_kind.size(); ++i)
      std::printf("%s\"%s\": %.9g", i ? ", " : "", r.by_kind[i].first.c_str(), r.by_kind[i].second);
    std::printf("}");
  }
  std::printf("}");
}

void print_text(const LevelRun& r, const Options& o) {
  std::printf("level        %s\n", r.level.c_str());
  std::printf("peaks        int8 %.1f Gop/s (%s), fp16 %.1f (%s), fp32 %.1f (%s)\n", r.peaks.i8 * 1e-9,
              r.peaks.i8_probe.c_str(), r.peaks.f16 * 1e-9, r.peaks.f16_probe.c_str(), r.peaks.f32 * 1e-9,
              r.peaks.f32_probe.c_str());
  if (!r.has_floor) {
    std::printf("floor        none: no probe for this level's instructions\n");
  } else {
    std::printf("floor        %.4f ms = linears %.4f + attention %.4f (the products at the peaks, nothing else,\n"
                "             but a linear no faster than reading its weights: products %.4f, weights %.4f)\n",
                r.fl_total, r.fl_linear, r.fl_att, r.fl_linear_compute, r.fl_linear_read);
  }
  if (o.floor_only) return;
  const double best = r.best(), median = median_of(r.ms);
  std::printf("kernels      %s\n", r.kernel_summary.c_str());
  std::printf("measured     best %.4f ms, median %.4f ms (%d rounds x %d runs after %d warm-up)\n", best, median,
              o.rounds, o.iters, o.warmup);
  if (r.has_floor)
    std::printf("ratio        %.2fx the floor (best), %.2fx (median)\n", best / r.fl_total, median / r.fl_total);
  double profiled_total = 0;
  for (const auto& [k, t] : r.by_kind) profiled_total += t;
  std::printf("by op kind   (a profiled session, ms per run; %.4f ms in all)\n", profiled_total);
  for (const auto& [k, t] : r.by_kind) {
    const double fl = k == "linear" ? r.fl_linear : k == "attention" ? r.fl_att : 0;
    if (r.has_floor && fl > 0)
      std::printf("  %-12s %8.4f ms  %5.1f%%  %6.2fx its floor (%.4f ms)\n", k.c_str(), t, 100 * t / profiled_total,
                  t / fl, fl);
    else
      std::printf("  %-12s %8.4f ms  %5.1f%%  (no products counted)\n", k.c_str(), t, 100 * t / profiled_total);
  }
  if (r.has_floor && r.kind_ms("linear") > 0 && r.kind_ms("attention") > 0) {
    const double rest = profiled_total - r.kind_ms("linear") - r.kind_ms("attention");
    std::printf("beyond reach  the floor + the ops without products as profiled: %.4f ms (%.2fx the floor)\n",
                r.fl_total + rest, (r.fl_total + rest) / r.fl_total);
  }
}

// With --isa all: one line per level, the same runs as print_text's.
void print_table(const std::vector<LevelRun>& runs, const Options& o) {
  std::printf("\n%-12s %-30s %9s %9s %9s %8s %8s %10s %10s\n", "level", "int8 probe", "Gop/s", "floor ms", "best ms",
              "x floor", "median", "linears x", "attention x");
  for (const LevelRun& r : runs) {
    const std::string probe = r.peaks.i8_probe.substr(0, r.peaks.i8_probe.find(" ("));  // without the remark
    const double best = r.best(), median = median_of(r.ms);
    const double lin = r.kind_ms("linear"), att = r.kind_ms("attention");
    if (o.floor_only) {
      std::printf("%-12s %-30.30s %9.1f %9s\n", r.level.c_str(), probe.c_str(), r.peaks.i8 * 1e-9,
                  r.has_floor ? std::to_string(r.fl_total).c_str() : "none");
      continue;
    }
    if (!r.has_floor) {
      std::printf("%-12s %-30.30s %9.1f %9s %9.4f\n", r.level.c_str(), probe.c_str(), r.peaks.i8 * 1e-9,
                  "none", best);
      continue;
    }
    std::printf("%-12s %-30.30s %9.1f %9.4f %9.4f %8.2f %8.2f %10.2f %10.2f\n", r.level.c_str(), probe.c_str(), r.peaks.i8 * 1e-9, r.fl_total, best, best / r.fl_total, median / r.fl_total,
                lin / r.fl_linear, r.fl_att > 0 ? att / r.fl_att : 0.0);
  }
  std::printf("(x floor: best-of and median over the floor; linears x, attention x: each kind's profiled time over "
              "its own floor; the levels' rounds interleaved)\n");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int status = 0;
  if (!parse_options(argc, argv, &o, &status)) return status;

  // The levels to run: --isa all, every SIMD preset this CPU supports; --isa LEVEL, that one; else
  // the default table's (the CPU's own features, or ENCRT_ISA's level).
  std::vector<LevelRun> runs;
  std::vector<kernels::IsaFeatures> features;
  if (o.isa == "all") {
    for (const kernels::IsaLevel& l : kernels::kIsaLevels) {
      if (l.features == 0 || !kernels::isa_supported(l.features)) continue;
      runs.emplace_back();
      runs.back().level = runs.back().isa = l.name;
      features.push_back(l.features);
    }
    if (runs.empty()) return usage("--isa all: this CPU supports no SIMD level");
  } else if (!o.isa.empty()) {
    const kernels::IsaLevel* l = kernels::find_isa_level(o.isa);
    if (!l) return usage(("unknown --isa " + o.isa + " (one of all, " + kernels::isa_level_names() + ")").c_str());
    if (!kernels::isa_supported(l->features)) return usage(("this CPU cannot run --isa " + o.isa).c_str());
    runs.emplace_back();
    runs.back().level = runs.back().isa = l->name;
    features.push_back(l->features);
  } else {
    runs.emplace_back();
    features.push_back(kernels::default_kernel_table().features & ~kernels::kIsaPreferences);
    runs.back().level = kernels::isa_features_name(features.back());
  }

  std::unique_ptr<Model> model;
  if (Status s = Model::load(o.model, &model); !s) {
    std::fprintf(stderr, "encrt_model_floor: %s\n", s.to_string().c_str());
    return 1;
  }
  const encrt::ModelConfig& cfg = model->config();
  if (o.seq > cfg.max_seq_len) return usage(("--seq exceeds the model's max_seq_len " + std::to_string(cfg.max_seq_len)).c_str());

  const encrt::host::HostInfo host = encrt::host::detect_host();
  if (host.emulated) {
    std::fprintf(stderr, "encrt_model_floor: running under %s: neither the probes nor the timings mean anything\n",
                 host.emulator.c_str());
  }
  encrt::bench::Peaks measured = encrt::bench::measure_peaks(false);
  const Products p = count_products(*model, o.batch, o.seq);
  const size_t weight_bytes = static_cast<size_t>(p.bytes_i8 + p.bytes_f16 + p.bytes_f32);
  double bandwidth = encrt::bench::measure_read_bandwidth(weight_bytes);
  if (p.linears != cfg.num_layers * 4) {
    // qkv, out, up, down per layer: a file laid out otherwise would be counted wrongly here.
    std::fprintf(stderr, "encrt_model_floor: expected %d layer weights (4 per layer), found %d\n",
                 cfg.num_layers * 4, p.linears);
    return 1;
  }

  // Timing: every level's session first, then rounds that visit the levels in turn, so that the
  // machine's load falls on all alike; then one profiled session per level for the split by op kind.
  if (!o.floor_only) {
    std::mt19937 rng(1234);
    std::uniform_int_distribution<int> pick(std::min(1000, cfg.vocab_size - 1), cfg.vocab_size - 1);
    std::vector<int32_t> ids(static_cast<size_t>(o.batch) * o.seq), mask(ids.size(), 1);
    for (int32_t& id : ids) id = pick(rng);
    const Inputs in{o.batch, o.seq, ids.data(), mask.data(), nullptr};
    auto run_n = [&](Session& s, int n, std::vector<double>* times) -> bool {
      for (int i = 0; i < n; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        if (Status st = s.run(in); !st) {
          std::fprintf(stderr, "encrt_model_floor: %s\n", st.to_string().c_str());
          return false;
        }
        if (times) times->push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      return true;
    };
    for (LevelRun& r : runs) {
      if (Status s = make_session(*model, o, r.isa, false, &r.session); !s) {
        std::fprintf(stderr, "encrt_model_floor: %s\n", s.to_string().c_str());
        return 1;
      }
      r.kernel_summary = r.session->kernel_summary();
      if (!run_n(*r.session, o.warmup, nullptr)) return 1;
    }
    for (int round = 0; round < o.rounds; ++round)
      for (LevelRun& r : runs)
        if (!run_n(*r.session, o.iters, &r.ms)) return 1;
    for (LevelRun& r : runs) {
      r.session.reset();
      std::unique_ptr<Session> profiled;
      if (Status s = make_session(*model, o, r.isa, true, &profiled); !s) {
        std::fprintf(stderr, "encrt_model_floor: %s\n", s.to_string().c_str());
        return 1;
      }
      if (!run_n(*profiled, o.warmup, nullptr)) return 1;
      profiled->reset_profile();
      if (!run_n(*profiled, o.iters, nullptr)) return 1;
      std::map<std::string, double> kinds;
      for (const OpProfile& op : profiled->profile()) kinds[op_kind(op.name)] += op.total_ms / o.iters;
      r.by_kind.assign(kinds.begin(), kinds.end());
      std::sort(r.by_kind.begin(), r.by_kind.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    }
  }

  // The probes again after the runs, the better of the two kept per instruction: a burst of the
  // machine's load during one measurement lowers a peak, and a lower peak flatters the ratio.
  if (!o.floor_only) {
    measured = encrt::bench::best_of(measured, encrt::bench::measure_peaks(false));
    bandwidth = std::max(bandwidth, encrt::bench::measure_read_bandwidth(weight_bytes));
  }
  for (size_t i = 0; i < runs.size(); ++i) set_floor(&runs[i], p, measured, bandwidth, features[i], o.threads);
  if (!o.json) {
    encrt::bench::print_peaks(measured);
    std::printf("measured read bandwidth: %.1f GB/s, one core streaming %.2f MiB (the linears' weights)\n",
                bandwidth * 1e-9, weight_bytes / 1048576.0);
  }

  if (o.json) {  // one object; with --isa all an array of them
    const bool all = o.isa == "all";
    if (all) std::printf("[");
    for (size_t i = 0; i < runs.size(); ++i) {
      if (i) std::printf(", ");
      print_json(runs[i], o, p, bandwidth, host);
    }
    std::printf(all ? "]\n" : "\n");
    return 0;
  }
  std::printf("cpu          %s%s\n", host.cpu_model.empty() ? "unknown" : host.cpu_model.c_str(),
              host.emulated ? " (EMULATED: meaningless)" : host.virtual_machine ? " (virtual machine, the CPU shared)" : "");
  std::printf("model        %s: %d layers, hidden %d, %d heads, ffn %d, attention %s%s\n", o.model.c_str(),
              cfg.num_layers, cfg.hidden_size, cfg.num_heads, cfg.ffn_size, cfg.attention_precision.c_str(),
              cfg.attention_window > 0 ? (", window " + std::to_string(cfg.attention_window)).c_str() : "");
  std::printf("shape        batch %d, seq %d, %d thread%s (floor assumes perfect scaling)\n", o.batch, o.seq,
              o.threads, o.threads == 1 ? "" : "s");
  std::printf("products     linears: int8 %.4g, fp16 %.4g, fp32 %.4g; attention %.4g (%s)\n", p.linear_i8,
              p.linear_f16, p.linear_f32, p.attention, p.attention_i8 ? "int8" : "fp32");
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs.size() > 1) std::printf("\n");
    print_text(runs[i], o);
  }
  if (runs.size() > 1) print_table(runs, o);
  return 0;
}
