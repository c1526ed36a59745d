// Text in, attention heat map out: which tokens each token attends to, for one layer and head,
// drawn in the terminal (and optionally written as a grayscale PGM image).
//
//   encrt_attention_heatmap MODEL.encrt "some text" [--layer L] [--head H] [--pgm OUT.pgm]
//
// Rows are the querying tokens, columns the attended tokens; darker characters mean more
// attention (" .:-=+*#%@" from 0 to the row's maximum). Each row ends with the token it attends
// to most. Defaults: the last layer, head 0.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"

namespace {

int fail(const encrt::Status& s) {
  std::fprintf(stderr, "encrt_attention_heatmap: %s\n", s.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: encrt_attention_heatmap MODEL.encrt TEXT [--layer L] [--head H] [--pgm OUT.pgm]\n");
    return 2;
  }
  int layer = -1, head = 0;
  std::string pgm;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--layer")) layer = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--head")) head = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--pgm")) pgm = argv[i + 1];
    else return fail(encrt::invalid_argument(std::string("unknown option ") + argv[i]));
  }
  std::unique_ptr<encrt::Model> model;
  if (encrt::Status s = encrt::Model::load(argv[1], &model); !s) return fail(s);
  const encrt::ModelConfig& c = model->config();
  if (layer < 0) layer = c.num_layers - 1;
  if (head < 0 || head >= c.num_heads)
    return fail(encrt::invalid_argument("--head must be in [0, " + std::to_string(c.num_heads) + ")"));
  std::unique_ptr<encrt::Tokenizer> tokenizer;
  if (encrt::Status s = encrt::Tokenizer::create(*model, &tokenizer); !s) return fail(s);
  std::vector<int32_t> ids;
  if (encrt::Status s = tokenizer->encode(argv[2], std::min(c.max_seq_len, 64), &ids); !s) return fail(s);
  const int seq = static_cast<int>(ids.size());

  encrt::SessionOptions options;
  options.max_batch = 1;
  options.max_seq = seq;
  options.attention_layer = layer;  // validated by Session::create
  std::unique_ptr<encrt::Session> session;
  if (encrt::Status s = encrt::Session::create(*model, options, &session); !s) return fail(s);
  encrt::Inputs in;
  in.batch = 1;
  in.seq = seq;
  in.input_ids = ids.data();
  if (encrt::Status s = session->run(in); !s) return fail(s);
  const float* probs = session->attention_probs() + static_cast<size_t>(head) * seq * seq;  // [1, heads, seq, seq]

  const std::vector<std::string>& vocab = model->vocabulary();
  size_t width = 0;
  for (int32_t id : ids) width = std::max(width, vocab[static_cast<size_t>(id)].size());
  width = std::min<size_t>(width, 12);
  static const char kShades[] = " .:-=+*#%@";
  std::printf("layer %d, head %d: row = query token, column = attended token\n", layer, head);
  for (int i = 0; i < seq; ++i) {
    const float* row = probs + static_cast<size_t>(i) * seq;
    const int best = static_cast<int>(std::max_element(row, row + seq) - row);
    const float top = row[best] > 0 ? row[best] : 1.0f;
    std::string line;
    for (int j = 0; j < seq; ++j) line += kShades[std::min(9, static_cast<int>(row[j] / top * 9.0f + 0.5f))];
    std::printf("%*.*s |%s| -> %s (%.2f)\n", static_cast<int>(width), static_cast<int>(width),
                vocab[static_cast<size_t>(ids[i])].c_str(), line.c_str(), vocab[static_cast<size_t>(ids[best])].c_str(),
                static_cast<double>(row[best]));
  }
  if (!pgm.empty()) {  // one pixel per (query, key), 16× enlarged, black = the row's maximum
    const int scale = 16, side = seq * scale;
    std::ofstream out(pgm, std::ios::binary);
    out << "P5\n" << side << " " << side << "\n255\n";
    for (int y = 0; y < side; ++y) {
      const float* row = probs + static_cast<size_t>(y / scale) * seq;
      const float top = *std::max_element(row, row + seq);
      for (int x = 0; x < side; ++x)
        out.put(static_cast<char>(255 - static_cast<int>(255.0f * (top > 0 ? row[x / scale] / top : 0.0f))));
    }
    if (!out) return fail(encrt::Status(encrt::StatusCode::kIoError, "cannot write '" + pgm + "'"));
    std::printf("wrote %s (%d x %d)\n", pgm.c_str(), side, side);
  }
  return 0;
}
