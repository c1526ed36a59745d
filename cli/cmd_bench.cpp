// encrt bench MODEL --batch B --seq S --threads T [--iters N] [--warmup N] [--json] [--profile]
// Latency of Session::run on synthetic ids (fixed seed, every token real), plus the figures an
// edge deployment cares about: load time, model and arena size, peak RSS. It first says what it
// ran on (CPU, kernel level, threads; emulation and virtual machines: core/host_info.h), so that
// numbers from qemu or a shared VM are never taken for a device's.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "cli/args.h"
#include "cli/backend_args.h"
#include "cli/padding_arg.h"
#include "cli/commands.h"
#include "core/host_info.h"
#include "kernels/isa.h"
#include "kernels/kernel_table.h"
#include "npy/npy.h"
#include "encrt/encrt.hpp"

namespace encrt::cli {

namespace {

int fail(const Status& s) {
  std::fprintf(stderr, "encrt bench: %s\n", s.to_string().c_str());
  return 1;
}

double peak_rss_mib() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // Linux reports KiB
}

double percentile(std::vector<double> sorted, double p) {
  const double pos = p * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

// The cpu backend's kernel level: --isa / isa=LEVEL (Session::create has checked it), else the
// level ENCRT_ISA forces or this CPU's own features choose.
std::string cpu_kernel_level(const SessionOptions& opt) {
  const auto it = opt.backend_options.find("isa");
  if (it != opt.backend_options.end())
    if (const kernels::IsaLevel* level = kernels::find_isa_level(it->second)) return level->name;
  return kernels::isa_features_name(kernels::default_kernel_table().features & ~kernels::kIsaPreferences);
}

// A string as a JSON string's contents (cpuinfo names are free text).
std::string json_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  Args args({"batch", "seq", "threads", "iters", "warmup", "backend", "isa", "backend-options", "ids", "mask", "padding"},
            {"help", "json", "profile", "no-graphs"});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  if (args.has("help") || args.positional().size() != 1) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt bench MODEL --batch B --seq S --threads T [--iters N] [--warmup N]\n"
                 "                   [--ids IDS.npy [--mask MASK.npy]] [--json] [--profile]\n"
                 "                   %s\n"
                 "                   %s\n"
                 "  Without --ids: random ids (fixed seed), every token real. With --ids: those ids\n"
                 "  ([batch, seq] int32/int64 .npy; batch and seq come from the array).\n",
                 kBackendUsage, kPaddingUsage);
    return args.has("help") ? 0 : 2;
  }
  int batch, seq, threads, iters, warmup;
  if (Status s = args.get_int("batch", 1, &batch); !s) return fail(s);
  if (Status s = args.get_int("seq", 128, &seq); !s) return fail(s);
  if (Status s = args.get_int("threads", 1, &threads); !s) return fail(s);
  if (Status s = args.get_int("iters", 50, &iters); !s) return fail(s);
  if (Status s = args.get_int("warmup", 5, &warmup); !s) return fail(s);
  if (iters < 1 || warmup < 0) return fail(invalid_argument("--iters must be >= 1 and --warmup >= 0"));
  npy::Int32Array given_ids, given_mask;
  if (args.has("ids")) {
    if (Status s = npy::read_int32(args.get("ids"), &given_ids); !s) return fail(s);
    if (given_ids.shape.size() == 1) given_ids.shape.insert(given_ids.shape.begin(), 1);
    if (given_ids.shape.size() != 2 || given_ids.shape[0] < 1 || given_ids.shape[1] < 1 ||
        given_ids.shape[0] > (1 << 20) || given_ids.shape[1] > (1 << 20))
      return fail(invalid_argument("--ids must be a non-empty [batch, seq] array"));
    batch = static_cast<int>(given_ids.shape[0]);
    seq = static_cast<int>(given_ids.shape[1]);
    if (args.has("mask")) {
      if (Status s = npy::read_int32(args.get("mask"), &given_mask); !s) return fail(s);
      if (given_mask.data.size() != given_ids.data.size())
        return fail(invalid_argument("--mask must have the shape of --ids"));
    }
  } else if (args.has("mask")) {
    return fail(invalid_argument("--mask needs --ids"));
  }

  const auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  SessionOptions opt;
  opt.max_batch = batch;
  opt.max_seq = seq;
  opt.threads = threads;
  if (Status s = apply_backend_args(args, &opt); !s) return fail(s);
  if (Status s = apply_padding_arg(args, &opt); !s) return fail(s);
  opt.profile = args.has("profile");
  const auto t1 = std::chrono::steady_clock::now();
  std::unique_ptr<Session> session;
  if (Status s = Session::create(*model, opt, &session); !s) return fail(s);
  const double session_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();

  std::mt19937 rng(1234);
  const int vocab = model->config().vocab_size;
  std::uniform_int_distribution<int> pick(std::min(1000, vocab - 1), vocab - 1);
  std::vector<int32_t> ids(static_cast<size_t>(batch) * seq), mask(ids.size(), 1);
  for (auto& id : ids) id = pick(rng);
  if (args.has("ids")) ids = given_ids.data;
  if (args.has("mask")) mask = given_mask.data;
  Inputs in{batch, seq, ids.data(), mask.data(), nullptr};

  for (int i = 0; i < warmup; ++i)
    if (Status s = session->run(in); !s) return fail(s);
  session->reset_profile();
  std::vector<double> ms, gpu_ms;
  ms.reserve(static_cast<size_t>(iters));
  gpu_ms.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    const auto a = std::chrono::steady_clock::now();
    if (Status s = session->run(in); !s) return fail(s);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
    if (const double g = session->last_run_device_ms(); g >= 0) gpu_ms.push_back(g);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(gpu_ms.begin(), gpu_ms.end());
  const double median = percentile(ms, 0.5);
  const double seq_per_s = 1000.0 * batch / median;
  const double rss = peak_rss_mib();
  const double model_mib = static_cast<double>(model->file_size()) / (1024.0 * 1024.0);
  const double arena_mib = static_cast<double>(session->arena_bytes()) / (1024.0 * 1024.0);

  const host::HostInfo host = host::detect_host();
  const std::string level = cpu_kernel_level(opt);
  if (args.has("json")) {
    std::printf("{\"host\": {\"cpu\": \"%s\", \"binary\": \"%s\", \"cpus\": %d, \"emulated\": %s, "
                "\"emulator\": \"%s\", \"emulation_reason\": \"%s\", \"virtual_machine\": %s, "
                "\"timings_meaningful\": %s}, \"isa\": \"%s\", \"best_isa\": \"%s\", ",
                json_escape(host.cpu_model).c_str(), host::binary_arch(), host.cpus, host.emulated ? "true" : "false",
                host.emulator.c_str(), json_escape(host.emulation_reason).c_str(),
                host.virtual_machine ? "true" : "false", host.emulated ? "false" : "true", level.c_str(),
                kernels::best_isa_level().name);
    std::printf("\"model\": \"%s\", \"backend\": \"%s\", \"batch\": %d, \"seq\": %d, \"threads\": %d, \"iters\": %d, "
                "\"kernels\": \"%s\", \"load_ms\": %.3f, \"session_ms\": %.3f, "
                "\"latency_ms\": {\"min\": %.4f, \"median\": %.4f, \"p90\": %.4f, \"max\": %.4f}, "
                "\"sequences_per_s\": %.2f, \"model_mib\": %.3f, \"arena_mib\": %.3f, \"peak_rss_mib\": %.2f",
                args.positional()[0].c_str(), opt.backend.c_str(), batch, seq, threads, iters,
                session->kernel_summary().c_str(), load_ms,
                session_ms, ms.front(), median, percentile(ms, 0.9), ms.back(), seq_per_s, model_mib, arena_mib, rss);
    if (!gpu_ms.empty())
      std::printf(", \"device_ms\": {\"min\": %.5f, \"median\": %.5f, \"max\": %.5f}", gpu_ms.front(),
                  percentile(gpu_ms, 0.5), gpu_ms.back());
    if (opt.profile) {
      std::printf(", \"profile\": [");
      bool first = true;
      for (const OpProfile& p : session->profile()) {
        std::printf("%s{\"op\": \"%s\", \"ms_per_run\": %.5f}", first ? "" : ", ", p.name.c_str(),
                    p.calls ? p.total_ms / iters : 0.0);
        first = false;
      }
      std::printf("]");
    }
    std::printf("}\n");
    return 0;
  }
  if (host.emulated)
    std::printf("EMULATED (%s): timings are not meaningful (%s)\n", host.emulator.c_str(),
                host.emulation_reason.c_str());
  std::printf("cpu          %s%s, %d CPUs, %s binary%s\n", host.cpu_model.empty() ? "unknown" : host.cpu_model.c_str(),
              host.emulated ? " (the emulator's host)" : "", host.cpus, host::binary_arch(),
              !host.virtual_machine ? ""
              : host.emulated       ? "; the host is a virtual machine (hypervisor flag)"
                                    : "; virtual machine (hypervisor flag): timings valid, the CPU shared");
  std::printf("isa          %s (the cpu backend's kernels; this CPU's best: %s)\n", level.c_str(),
              kernels::best_isa_level().name);
  std::printf("threads      %d\n", threads);
  std::printf("model        %s (%.2f MiB), loaded in %.2f ms; session created in %.2f ms\n",
              args.positional()[0].c_str(), model_mib, load_ms, session_ms);
  std::printf("backend      %s\n", opt.backend.c_str());
  std::printf("kernels      %s\n", session->kernel_summary().c_str());
  std::printf("shape        batch %d, seq %d, %d iterations after %d warm-up\n", batch, seq, iters, warmup);
  std::printf("latency ms   min %.3f  median %.3f  p90 %.3f  max %.3f\n", ms.front(), median, percentile(ms, 0.9),
              ms.back());
  if (!gpu_ms.empty())
    std::printf("device ms    min %.4f  median %.4f  max %.4f  (the device's own events: GPU time per run)\n",
                gpu_ms.front(), percentile(gpu_ms, 0.5), gpu_ms.back());
  std::printf("throughput   %.1f sequences/s\n", seq_per_s);
  std::printf("memory       arena %.2f MiB, peak RSS %.2f MiB\n", arena_mib, rss);
  if (opt.profile) {
    std::vector<OpProfile> prof = session->profile();
    // Aggregate by op name without the layer prefix so that "linear [qu8s8...]" shows once.
    std::printf("profile (ms per run, by op):\n");
    double total = 0;
    for (const OpProfile& p : prof) total += p.total_ms;
    std::vector<std::pair<std::string, double>> by_kind;
    for (const OpProfile& p : prof) {
      const std::string kind = p.name.substr(p.name.find('['));
      auto it = std::find_if(by_kind.begin(), by_kind.end(), [&](const auto& e) { return e.first == kind; });
      if (it == by_kind.end()) by_kind.emplace_back(kind, p.total_ms);
      else it->second += p.total_ms;
    }
    std::sort(by_kind.begin(), by_kind.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    for (const auto& [kind, t] : by_kind)
      std::printf("  %-48s %8.3f  %5.1f%%\n", kind.c_str(), t / iters, total > 0 ? 100.0 * t / total : 0.0);
  }
  return 0;
}

}  // namespace encrt::cli
