// encrt convert SRC_DIR -o MODEL.encrt [--dtype fp32|fp16|int8] [--pooling mean|cls|pooler|max]
//               [--head none] [--calibration IDS.npy] [--min-cosine X] [--min-label-agreement X]
//               [--attention int8|float] [--smoothing ALPHA] [--weight-bits 8|7] [--threads T]
//               [--attention-window W] [--quiet]
#include <chrono>
#include <cstdio>
#include <thread>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/progress.h"
#include "converter/convert.h"

namespace encrt::cli {

namespace {

int fail(const Status& s) {
  std::fprintf(stderr, "encrt convert: %s\n", s.to_string().c_str());
  return 1;
}

}  // namespace

int cmd_convert(int argc, char** argv) {
  Args args({"out", "dtype", "pooling", "calibration", "min-cosine", "attention", "smoothing", "threads", "head",
             "min-label-agreement", "attention-window", "weight-bits"},
            {"help", "quiet"}, {{"-o", "--out"}});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  if (args.has("help") || args.positional().size() != 1 || !args.has("out")) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt convert SRC_DIR -o MODEL.encrt [--dtype fp32|fp16|int8] [--pooling mean|cls|pooler|max]\n"
                 "                     [--head none] [--calibration IDS.npy] [--min-cosine X] [--min-label-agreement X]\n"
                 "                     [--attention int8|float] [--smoothing ALPHA] [--weight-bits 8|7] [--threads T]\n"
                 "                     [--attention-window W] [--quiet]\n"
                 "  SRC_DIR holds config.json (\"model_type\": \"bert\" or \"torch_encoder\") and model.safetensors\n"
                 "  int8: weights per output channel, activations per token row at run time. The converter\n"
                 "  runs fp32 and int8 on calibration ids (--calibration, else synthetic), prints the accuracy\n"
                 "  kept per layer, and keeps layers in fp16 until the smallest pooled-output cosine is at least\n"
                 "  --min-cosine (default 0.99) and, for a classifier head, the share of labels that agree with\n"
                 "  fp32 is at least --min-label-agreement (default 0.99). --smoothing: SmoothQuant alpha\n"
                 "  (default 0.5, 0 = off). --weight-bits 7: int8 weights in [-63, 63] (the FFN down projections\n"
                 "  keep 8 bits), coarser but faster on x86 CPUs with AVX2 and no VNNI (MiniLM 1.16x on a Zen 3);\n"
                 "  elsewhere as fast as 8 bits.\n"
                 "  --head none: the encoder alone, without the checkpoint's classifier.\n"
                 "  --attention-window W: sliding-window attention, each query sees the keys within +-W of it\n"
                 "  (default 0: all keys).\n");
    return args.has("help") ? 0 : 2;
  }
  converter::ConvertOptions opt;
  opt.source_dir = args.positional()[0];
  opt.output_path = args.get("out");
  opt.pooling = args.get("pooling");
  opt.head = args.get("head");
  const std::string dtype = args.get("dtype", "fp32");
  if (dtype == "fp32" || dtype == "f32") {
    opt.weight_type = converter::WeightType::kF32;
  } else if (dtype == "fp16" || dtype == "f16") {
    opt.weight_type = converter::WeightType::kF16;
  } else if (dtype == "int8" || dtype == "i8") {
    opt.weight_type = converter::WeightType::kI8;
  } else {
    return fail(invalid_argument("--dtype must be fp32, fp16 or int8 (got '" + dtype + "')"));
  }
  const bool int8 = opt.weight_type == converter::WeightType::kI8;
  for (const char* option : {"calibration", "min-cosine", "attention", "smoothing", "min-label-agreement", "weight-bits"})
    if (args.has(option) && !int8) return fail(invalid_argument(std::string("--") + option + " applies to --dtype int8 only"));
  const std::string attention = args.get("attention", "int8");
  if (attention != "int8" && attention != "float") return fail(invalid_argument("--attention must be int8 or float"));
  opt.int8_attention = attention == "int8";
  if (Status s = args.get_double("min-cosine", 0.99, &opt.min_cosine); !s) return fail(s);
  if (Status s = args.get_double("smoothing", 0.5, &opt.smoothing_alpha); !s) return fail(s);
  if (Status s = args.get_double("min-label-agreement", 0.99, &opt.min_label_agreement); !s) return fail(s);
  if (!(opt.min_label_agreement >= 0.0 && opt.min_label_agreement <= 1.0))
    return fail(invalid_argument("--min-label-agreement must be in [0, 1]"));
  if (!(opt.min_cosine >= -1.0 && opt.min_cosine <= 1.0)) return fail(invalid_argument("--min-cosine must be in [-1, 1]"));
  if (!(opt.smoothing_alpha >= 0.0 && opt.smoothing_alpha <= 1.0))
    return fail(invalid_argument("--smoothing must be in [0, 1]"));
  const int default_threads = static_cast<int>(std::max(1u, std::min(4u, std::thread::hardware_concurrency())));
  if (Status s = args.get_int("threads", default_threads, &opt.calibration_threads); !s) return fail(s);
  opt.calibration_ids = args.get("calibration");
  if (Status s = args.get_int("weight-bits", 8, &opt.int8_weight_bits); !s) return fail(s);
  if (opt.int8_weight_bits != 7 && opt.int8_weight_bits != 8) return fail(invalid_argument("--weight-bits must be 8 or 7"));
  if (Status s = args.get_int("attention-window", 0, &opt.attention_window); !s) return fail(s);
  if (opt.attention_window < 0) return fail(invalid_argument("--attention-window must be >= 0 (0: full attention)"));

  Progress progress(!args.has("quiet"));
  opt.log = [&](const std::string& line) { progress.line(line); };
  opt.progress = [&](const std::string& stage, int done, int total) { progress.update(stage, done, total); };
  const auto start = std::chrono::steady_clock::now();

  if (Status s = converter::convert(opt); !s) return fail(s);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  char timing[32];
  std::snprintf(timing, sizeof timing, "%.2f", secs);
  progress.line("wrote " + opt.output_path + " in " + timing + " s");
  return 0;
}

}  // namespace encrt::cli
