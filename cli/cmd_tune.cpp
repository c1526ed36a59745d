// encrt tune MODEL [--batch B] [--seq S] [--threads T] [--iters N] [--rounds R] [--min-gain X]
//                  [--min-cosine X] [--max-seconds X] [--json] [--backend ...] [--backend-options ...]
// Which of the backend's options run this model fastest here, at this shape
// (encrt::tune_backend_options: each candidate checked against the defaults' answers, then timed
// side by side with the best so far). Prints every trial and the --backend-options to use.
#include <cstdio>
#include <string>

#include "cli/args.h"
#include "cli/backend_args.h"
#include "cli/commands.h"
#include "cli/task_args.h"
#include "core/host_info.h"
#include "encrt/encrt.hpp"

namespace encrt::cli {

namespace {

int fail(const Status& s) {
  std::fprintf(stderr, "encrt tune: %s\n", s.to_string().c_str());
  return 1;
}

std::string joined(const std::map<std::string, std::string>& options) {
  std::string s;
  for (const auto& [k, v] : options) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

}  // namespace

int cmd_tune(int argc, char** argv) {
  Args args({"batch", "seq", "threads", "iters", "rounds", "min-gain", "min-cosine", "max-seconds", "backend", "isa",
             "backend-options"},
            {"help", "json", "no-graphs"});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  if (args.has("help") || args.positional().size() != 1) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt tune MODEL [--batch B] [--seq S] [--threads T] [--iters N] [--rounds R]\n"
                 "                  [--min-gain X] [--min-cosine X] [--max-seconds X] [--json]\n"
                 "                  %s\n"
                 "  Tries each option the backend lists as tunable, one at a time on top of the best so far,\n"
                 "  on random ids of shape [B, S] (every token real): a candidate whose hidden state differs\n"
                 "  from the defaults' (a token's cosine below --min-cosine, default 0.99) is rejected; the\n"
                 "  others are timed side by side with the best (R rounds of N runs; GPU time where the\n"
                 "  backend has a clock) and taken when faster by --min-gain (default 0.03). Prints the\n"
                 "  --backend-options to use. Defaults: batch 1, seq 128, threads 1, iters 20, rounds 3.\n"
                 "  --max-seconds X: start no candidate X seconds after the first (default 0: no limit); the\n"
                 "  result is the best found by then and names the first candidate not tried.\n",
                 kBackendUsage);
    return args.has("help") ? 0 : 2;
  }
  TuneOptions t;
  int threads = 1;
  if (Status s = args.get_int("batch", 1, &t.batch); !s) return fail(s);
  if (Status s = args.get_int("seq", 128, &t.seq); !s) return fail(s);
  if (Status s = args.get_int("threads", 1, &threads); !s) return fail(s);
  if (Status s = args.get_int("iters", 20, &t.iters); !s) return fail(s);
  if (Status s = args.get_int("rounds", 3, &t.rounds); !s) return fail(s);
  if (Status s = args.get_double("min-gain", 0.03, &t.min_gain); !s) return fail(s);
  if (Status s = args.get_double("min-cosine", 0.99, &t.min_cosine); !s) return fail(s);
  if (Status s = args.get_double("max-seconds", 0.0, &t.max_seconds); !s) return fail(s);

  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  SessionOptions opt;
  opt.max_batch = t.batch;
  opt.max_seq = t.seq;
  opt.threads = threads;
  if (Status s = apply_backend_args(args, &opt); !s) return fail(s);
  // Each trial as it ends (text: on stdout, the table; --json: on stderr, so that a crash in a
  // candidate still leaves the trials before it).
  const bool json = args.has("json");
  t.progress = [json](const TuneTrial& x) {
    FILE* out = json ? stderr : stdout;
    std::fprintf(out, "  %-28s %-10s", x.option.c_str(), x.outcome.c_str());
    if (x.ms >= 0) std::fprintf(out, " %10.4f ms against %.4f ms (%.2fx)", x.ms, x.best_ms, x.best_ms / x.ms);
    if (x.min_cosine >= -1.0 && x.outcome != "refused") std::fprintf(out, "  worst token cosine %.6f", x.min_cosine);
    if (!x.detail.empty()) std::fprintf(out, "  (%s)", x.detail.c_str());
    std::fprintf(out, "\n");
    std::fflush(out);
  };
  const host::HostInfo host = host::detect_host();
  if (!json)
    std::printf("cpu      %s, %d CPUs%s\n", host.cpu_model.empty() ? "unknown" : host.cpu_model.c_str(), host.cpus,
                host.emulated ? " (EMULATED: timings are not meaningful)" : "");
  TuneResult r;
  if (Status s = tune_backend_options(*model, opt, t, &r); !s) return fail(s);

  const char* clock = r.device_time ? "device" : "wall";
  if (json) {
    std::printf("{\"cpu\": %s, \"model\": %s, \"backend\": %s, \"batch\": %d, \"seq\": %d, \"threads\": %d, "
                "\"backend_summary\": %s, \"clock\": \"%s\", \"options\": %s, \"default_ms\": %.5f, \"tuned_ms\": %.5f, "
                "\"stopped_before\": %s, \"trials\": [",
                json_string(host.cpu_model).c_str(), json_string(args.positional()[0]).c_str(),
                json_string(r.backend).c_str(), t.batch, t.seq, threads, json_string(r.backend_summary).c_str(), clock, json_string(joined(r.options)).c_str(),
                r.default_ms, r.tuned_ms, json_string(r.stopped_before).c_str());
    for (size_t i = 0; i < r.trials.size(); ++i) {
      const TuneTrial& x = r.trials[i];
      std::printf("%s{\"option\": %s, \"outcome\": \"%s\", \"ms\": %.5f, \"best_ms\": %.5f, \"min_cosine\": %.6f, "
                  "\"detail\": %s}",
                  i ? ", " : "", json_string(x.option).c_str(), x.outcome.c_str(), x.ms, x.best_ms, x.min_cosine,
                  json_string(x.detail).c_str());
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("backend  %s, batch %d, seq %d, threads %d; %s time, median of %d rounds of %d runs (the trials above)\n",
              r.backend.c_str(), t.batch, t.seq, threads, clock, t.rounds, t.iters);
  std::printf("summary  %s\n", r.backend_summary.c_str());
  const std::string best = joined(r.options);
  std::printf("best     %s\n", best.empty() ? "the defaults" : ("--backend-options " + best).c_str());
  std::printf("time     %.4f ms against the defaults' %.4f ms (%.2fx), side by side\n", r.tuned_ms, r.default_ms,
              r.tuned_ms > 0 ? r.default_ms / r.tuned_ms : 0.0);
  if (!r.stopped_before.empty())
    std::printf("stopped  after %g s of candidates (--max-seconds), before %s: it and the candidates after it were not tried\n",
                t.max_seconds, r.stopped_before.c_str());
  return 0;
}

}  // namespace encrt::cli
