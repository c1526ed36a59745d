// encrt convert SRC_DIR -o MODEL.encrt [--dtype fp32|fp16|int8] [--pooling mean|cls|pooler]
#include <chrono>
#include <cstdio>

#include "cli/args.h"
#include "cli/commands.h"
#include "converter/convert.h"

namespace encrt::cli {

namespace {
int fail(const Status& s) {
  std::fprintf(stderr, "encrt convert: %s\n", s.to_string().c_str());
  return 1;
}
}  // namespace

int cmd_convert(int argc, char** argv) {
  Args args({"out", "dtype", "pooling"}, {"help", "quiet"}, {{"-o", "--out"}});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  if (args.has("help") || args.positional().size() != 1 || !args.has("out")) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt convert SRC_DIR -o MODEL.encrt [--dtype fp32|fp16|int8] [--pooling mean|cls|pooler]\n"
                 "  SRC_DIR holds config.json (\"model_type\": \"bert\" or \"torch_encoder\") and model.safetensors\n");
    return args.has("help") ? 0 : 2;
  }
  converter::ConvertOptions opt;
  opt.source_dir = args.positional()[0];
  opt.output_path = args.get("out");
  opt.pooling = args.get("pooling");
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
  if (!args.has("quiet")) opt.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  const auto start = std::chrono::steady_clock::now();
  if (Status s = converter::convert(opt); !s) return fail(s);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!args.has("quiet")) std::fprintf(stderr, "wrote %s in %.2f s\n", opt.output_path.c_str(), secs);
  return 0;
}

}  // namespace encrt::cli
