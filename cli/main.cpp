// encrt: convert, run, inspect and benchmark Transformer encoders.
#include <cstdio>
#include <cstring>

#include "cli/commands.h"
#include "encrt/encrt.hpp"

namespace {

void usage(FILE* out) {
  std::fprintf(out,
               "encrt %s: Transformer encoders on edge devices\n"
               "\n"
               "usage: encrt <command> [options]\n"
               "  convert SRC_DIR -o MODEL.encrt [--dtype fp32|fp16|int8] [--pooling mean|cls|pooler]\n"
               "          [--calibration IDS.npy] [--min-cosine X]\n"
               "  run     MODEL --ids IDS.npy [--mask MASK.npy] [--token-type-ids TT.npy] -o OUT.npy\n"
               "          [--output hidden|pooled|attention] [--attention-layer L] [--threads T]\n"
               "  inspect MODEL [--batch B] [--seq S] [--threads T] [--buffers]\n"
               "  bench   MODEL --batch B --seq S --threads T [--iters N] [--warmup N] [--json] [--profile]\n"
               "  tune    MODEL [--batch B] [--seq S] [--threads T] [--iters N] [--rounds R] [--json]\n"
               "  (run, inspect, bench, tune: [--backend auto|cpu|xnnpack|cuda] [--isa LEVEL]\n"
               "   [--backend-options NAME=VALUE,...])\n"
               "  tokenize MODEL (--text TEXT [--pair TEXT2] | --file FILE [--pair-file FILE2]) [--max-length N]\n"
               "          [--truncation S] [--no-truncation] [--batch B] [--pieces] [--offsets] [--json]\n"
               "  embed   MODEL (TEXT... | --file FILE) [-o OUT.npy] [--json]\n"
               "  similarity MODEL TEXT TEXT [TEXT ...] [--matrix] [--json]\n"
               "  search  MODEL --corpus FILE (--query TEXT | --queries FILE) [-k K] [--cache FILE.npy] [--json]\n"
               "  classify MODEL (TEXT... | --file FILE) [--pair TEXT2 | --pair-file FILE2] [--top K] [--json]\n"
               "  ner     MODEL (TEXT... | --file FILE) [--aggregation none|simple|first|average|max] [--json]\n"
               "  rerank  MODEL --query TEXT (PASSAGE... | --file FILE) [-k K] [--json]\n"
               "  (embed, similarity, search, classify, ner, rerank: [--max-batch B] [--max-seq S] [--no-truncate]\n"
               "   [--verbose])\n"
               "  attention MODEL TEXT [--layer L] [--head H | --all-heads] -o MAP.png|MAP.svg [--json]\n"
               "  verify  MODEL [--repeat N]\n"
               "\n"
               "Run a command with --help for its details.\n",
               encrt::version());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char* cmd = argv[1];
  if (!std::strcmp(cmd, "-h") || !std::strcmp(cmd, "--help") || !std::strcmp(cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!std::strcmp(cmd, "--version")) {
    std::printf("encrt %s\n", encrt::version());
    return 0;
  }
  if (!std::strcmp(cmd, "convert")) return encrt::cli::cmd_convert(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "run")) return encrt::cli::cmd_run(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "inspect")) return encrt::cli::cmd_inspect(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "bench")) return encrt::cli::cmd_bench(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "tune")) return encrt::cli::cmd_tune(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "tokenize")) return encrt::cli::cmd_tokenize(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "embed")) return encrt::cli::cmd_embed(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "similarity")) return encrt::cli::cmd_similarity(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "search")) return encrt::cli::cmd_search(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "classify")) return encrt::cli::cmd_classify(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "ner")) return encrt::cli::cmd_ner(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "rerank")) return encrt::cli::cmd_rerank(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "attention")) return encrt::cli::cmd_attention(argc - 2, argv + 2);
  if (!std::strcmp(cmd, "verify")) return encrt::cli::cmd_verify(argc - 2, argv + 2);
  std::fprintf(stderr, "encrt: unknown command '%s'\n\n", cmd);
  usage(stderr);
  return 2;
}
