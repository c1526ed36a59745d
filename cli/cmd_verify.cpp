// encrt verify MODEL [--repeat N]: checks every checksum of a model file (each tensor's and the
// structure's, README "Model integrity"); prints each damaged tensor and a summary. Exit 0 only
// when every checksum is present and matches. --repeat N also times loading with and without
// the load option verify_checksums, N rounds each, page cache warm (benchmarks/verify_cost.sh).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "encrt/encrt.hpp"

namespace encrt::cli {

namespace {

int fail(const Status& s) {
  std::fprintf(stderr, "encrt verify: %s\n", s.to_string().c_str());
  return 1;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timing {
  std::vector<double> ms;
  double min() const { return *std::min_element(ms.begin(), ms.end()); }
  double median() const {
    std::vector<double> s = ms;
    std::sort(s.begin(), s.end());
    const size_t n = s.size();
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  }
};

// Loads `path` `rounds` times with `options` (the model freed after each), timing each load.
Status time_loads(const std::string& path, const LoadOptions& options, int rounds, Timing* out) {
  for (int i = 0; i < rounds; ++i) {
    std::unique_ptr<Model> model;
    const double t0 = now_ms();
    if (Status s = Model::load(path, options, &model); !s) return s;
    out->ms.push_back(now_ms() - t0);
  }
  return Status::ok();
}

// What loading costs with and without verification. Rounds alternate so that a busy machine's
// noise falls on both sides alike; a first untimed verification warms the page cache.
int report_timing(const std::string& path, int rounds) {
  Timing plain, verified, verify_only;
  ChecksumReport report;
  if (Status s = Model::verify_file(path, &report); !s) return fail(s);
  LoadOptions with_verify;
  with_verify.verify_checksums = true;
  for (int i = 0; i < rounds; ++i) {
    if (Status s = time_loads(path, LoadOptions(), 1, &plain); !s) return fail(s);
    if (Status s = time_loads(path, with_verify, 1, &verified); !s) return fail(s);
    const double t0 = now_ms();
    if (Status s = Model::verify_file(path, &report); !s) return fail(s);
    verify_only.ms.push_back(now_ms() - t0);
  }
  const double mb = static_cast<double>(report.bytes_checked) / 1e6;
  std::printf("timing over %d rounds (page cache warm), %.2f MB hashed:\n", rounds, mb);
  std::printf("  %-28s min %8.3f ms   median %8.3f ms\n", "load", plain.min(), plain.median());
  std::printf("  %-28s min %8.3f ms   median %8.3f ms\n", "load + verify_checksums", verified.min(),
              verified.median());
  std::printf("  %-28s min %8.3f ms   median %8.3f ms   (%.2f GB/s at the min)\n", "verify_file alone",
              verify_only.min(), verify_only.median(), mb / verify_only.min());
  std::printf("  verification adds %.3f ms to the fastest load (%.1fx)\n", verified.min() - plain.min(),
              verified.min() / plain.min());
  return 0;
}

}  // namespace

int cmd_verify(int argc, char** argv) {
  Args args({"repeat"}, {"help"});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  if (args.has("help") || args.positional().size() != 1) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt verify MODEL [--repeat N]\n"
                 "  Checks every tensor's checksum and the file's structure checksum. Exit 0 when all are\n"
                 "  present and match, 1 otherwise. --repeat N: then times N loads with and without\n"
                 "  verification (page cache warm; min and median).\n");
    return args.has("help") ? 0 : 2;
  }
  const std::string& path = args.positional()[0];
  int repeat = 0;
  if (Status s = args.get_int("repeat", 0, &repeat); !s) return fail(s);
  if (repeat < 0 || (args.has("repeat") && repeat < 1)) return fail(invalid_argument("--repeat must be at least 1"));

  ChecksumReport report;
  const double t0 = now_ms();
  if (Status s = Model::verify_file(path, &report); !s) return fail(s);
  const double ms = now_ms() - t0;
  if (!report.has_checksums())
    return fail(invalid_model("'" + path + "' has no checksums to verify (written by a converter before they were "
                              "added); convert it again to get them"));
  for (const ChecksumReport::Mismatch& m : report.mismatches) {
    if (m.tensor.empty())
      std::printf("MISMATCH structure (config, vocabulary, metadata, head, tensor names and shapes): %zu bytes, "
                  "stored 0x%016" PRIx64 ", computed 0x%016" PRIx64 "\n",
                  m.bytes, m.stored, m.computed);
    else
      std::printf("MISMATCH tensor '%s': %zu bytes, stored 0x%016" PRIx64 ", computed 0x%016" PRIx64 "\n",
                  m.tensor.c_str(), m.bytes, m.stored, m.computed);
  }
  for (const std::string& name : report.unchecked) std::printf("NO CHECKSUM tensor '%s'\n", name.c_str());
  if (!report.structure_checked) std::printf("NO CHECKSUM structure\n");
  std::printf("%s: %zu of %zu tensors checked%s, %.2f MB in %.2f ms: %s\n", path.c_str(), report.tensors_checked,
              report.tensors, report.structure_checked ? " and the structure" : "",
              static_cast<double>(report.bytes_checked) / 1e6, ms,
              report.ok() ? "all checksums match"
              : !report.mismatches.empty()
                  ? (std::to_string(report.mismatches.size()) + " do not match: the file is corrupt").c_str()
                  : "some parts have no checksum");
  if (!report.ok()) return 1;
  return repeat > 0 ? report_timing(path, repeat) : 0;
}

}  // namespace encrt::cli
