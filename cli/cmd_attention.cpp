// encrt attention MODEL TEXT [--layer L] [--head H | --all-heads] -o MAP.png|MAP.svg [--json]:
// the attention probabilities of one layer for a text, drawn as a heat map with the word pieces
// on both axes (heatmap/attention_figure.h), or printed as JSON.
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/args.h"
#include "cli/backend_args.h"
#include "cli/commands.h"
#include "cli/heatmap/attention_figure.h"
#include "cli/heatmap/figure_file.h"
#include "encrt/encrt.hpp"

namespace encrt::cli {

namespace {

constexpr int kDefaultMaxLength = 64;  // beyond this the labels of one map get too small to read

int fail(const Status& s) {
  std::fprintf(stderr, "encrt attention: %s\n", s.to_string().c_str());
  return 1;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Status optional_float(const Args& args, const char* name, std::optional<float>* out) {
  if (!args.has(name)) return Status::ok();
  double v = 0;
  if (Status s = args.get_double(name, 0, &v); !s) return s;
  *out = static_cast<float>(v);
  return Status::ok();
}

}  // namespace

int cmd_attention(int argc, char** argv) {
  Args args({"layer", "head", "out", "max-length", "vmin", "vmax", "threads", "backend", "isa", "backend-options"},
            {"help", "all-heads", "json"}, {{"-o", "--out"}});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  if (args.has("help") || args.positional().size() != 2 || (!args.has("out") && !args.has("json"))) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt attention MODEL TEXT [--layer L] [--head H | --all-heads] -o MAP.png|MAP.svg\n"
                 "                       [--json] [--max-length N] [--vmin X] [--vmax Y] [--threads T]\n"
                 "                       %s\n"
                 "  draws layer L's attention probabilities for TEXT: rows are the querying word pieces,\n"
                 "  columns the attended ones, [CLS] and [SEP] included. Defaults: the last layer, head 0.\n"
                 "  --all-heads  a grid of small maps, one per head, on one colour scale\n"
                 "  -o           .png (libpng) or .svg (crisp text; hover a cell for its value)\n"
                 "  --json       prints {model, layer, heads, tokens, ids, attention[head][query][key]}\n"
                 "  --max-length at most N word pieces with [CLS] and [SEP] (default %d; longer text is\n"
                 "               cut, with a note on stderr); at most the model's max_seq_len\n"
                 "  --vmin/--vmax the colour scale's ends (default: 0, since these are probabilities, and\n"
                 "               the largest value shown)\n",
                 kBackendUsage, kDefaultMaxLength);
    return args.has("help") ? 0 : 2;
  }
  const std::string model_path = args.positional()[0], text = args.positional()[1];
  const std::string out_path = args.get("out");
  if (args.has("head") && args.has("all-heads")) return fail(invalid_argument("give --head or --all-heads, not both"));
  // The output's type is checked first, so a bad name fails before the model runs.
  if (args.has("out")) {
    heatmap::ImageFormat format;
    if (Status s = heatmap::image_format_of(out_path, &format); !s) return fail(s);
  }
  heatmap::AttentionFigure figure;
  // Probabilities start at 0: a scale from 0 keeps maps of different heads and texts comparable.
  figure.vmin = 0.0f;
  if (Status s = optional_float(args, "vmin", &figure.vmin); !s) return fail(s);
  if (Status s = optional_float(args, "vmax", &figure.vmax); !s) return fail(s);
  if (figure.vmin && figure.vmax && !(*figure.vmin < *figure.vmax))
    return fail(invalid_argument("the colour scale needs --vmin < --vmax (--vmin is 0 unless given)"));

  std::unique_ptr<Model> model;
  if (Status s = Model::load(model_path, &model); !s) return fail(s);
  const ModelConfig& c = model->config();
  std::unique_ptr<Tokenizer> tokenizer;
  if (Status s = Tokenizer::create(*model, &tokenizer); !s)
    return fail(Status(s.code(), "this model cannot turn text into tokens: " + s.message()));

  int layer = 0, head = 0, max_length = 0;
  if (Status s = args.get_int("layer", c.num_layers - 1, &layer); !s) return fail(s);
  if (layer < 0 || layer >= c.num_layers)
    return fail(invalid_argument("--layer " + std::to_string(layer) + " is not a layer of this model (0.." +
                                 std::to_string(c.num_layers - 1) + ")"));
  if (Status s = args.get_int("head", 0, &head); !s) return fail(s);
  if (head < 0 || head >= c.num_heads)
    return fail(invalid_argument("--head " + std::to_string(head) + " is not a head of this model (0.." +
                                 std::to_string(c.num_heads - 1) + ")"));
  if (Status s = args.get_int("max-length", std::min(kDefaultMaxLength, c.max_seq_len), &max_length); !s)
    return fail(s);
  if (max_length < 3 || max_length > c.max_seq_len)
    return fail(invalid_argument("--max-length " + std::to_string(max_length) + " is outside 3.." +
                                 std::to_string(c.max_seq_len) + " (the model's max_seq_len)"));

  std::vector<int32_t> pieces, ids;
  if (Status s = tokenizer->tokenize(text, &pieces); !s) return fail(s);
  if (pieces.empty()) return fail(invalid_argument("the text is empty (no word pieces): nothing attends to anything"));
  if (Status s = tokenizer->encode(text, std::numeric_limits<int>::max(), &ids); !s) return fail(s);
  const size_t whole = ids.size();
  if (Status s = tokenizer->encode(text, max_length, &ids); !s) return fail(s);
  if (ids.size() < whole)
    std::fprintf(stderr, "encrt attention: note: the text has %zu tokens; the map shows the first %zu (--max-length)\n",
                 whole, ids.size());
  const int seq = static_cast<int>(ids.size());

  SessionOptions opt;
  opt.max_batch = 1;
  opt.max_seq = seq;
  opt.attention_layer = layer;
  if (Status s = apply_backend_args(args, &opt); !s) return fail(s);
  if (Status s = args.get_int("threads", 1, &opt.threads); !s) return fail(s);
  std::unique_ptr<Session> session;
  if (Status s = Session::create(*model, opt, &session); !s) return fail(s);
  Inputs in;
  in.batch = 1;
  in.seq = seq;
  in.input_ids = ids.data();
  if (Status s = session->run(in); !s) return fail(s);
  // copy_output rather than attention_probs(): it also works when a device backend holds the output.
  OutputInfo info;
  if (Status s = session->output("attention", &info); !s)
    return fail(Status(s.code(), "this model's session gives no attention probabilities: " + s.message()));
  const size_t per_head = static_cast<size_t>(seq) * static_cast<size_t>(seq);
  std::vector<float> probs(info.bytes / sizeof(float));
  if (probs.size() != static_cast<size_t>(c.num_heads) * per_head)
    return fail(internal_error("the attention output has " + std::to_string(probs.size()) + " values, expected " +
                               std::to_string(c.num_heads * per_head)));
  if (Status s = session->copy_output("attention", probs.data(), info.bytes); !s) return fail(s);

  const std::vector<std::string>& vocab = model->vocabulary();
  for (int32_t id : ids) figure.tokens.push_back(vocab[static_cast<size_t>(id)]);
  std::vector<int> heads;
  if (args.has("all-heads"))
    for (int h = 0; h < c.num_heads; ++h) heads.push_back(h);
  else
    heads.push_back(head);
  for (int h : heads) {
    const float* p = probs.data() + static_cast<size_t>(h) * per_head;
    figure.maps.emplace_back(p, p + per_head);
    if (heads.size() > 1) figure.panel_titles.push_back("head " + std::to_string(h));
  }
  figure.title = base_name(model_path) + "  layer " + std::to_string(layer) +
                 (heads.size() > 1 ? "  all " + std::to_string(heads.size()) + " heads" : "  head " + std::to_string(head));

  if (args.has("out")) {
    heatmap::Scene scene;
    if (Status s = heatmap::layout_attention(figure, &scene); !s) return fail(s);
    if (Status s = heatmap::write_image(scene, out_path); !s) return fail(s);
    std::fprintf(args.has("json") ? stderr : stdout, "wrote %s (%d x %d pixels, %d tokens, layer %d, %s)\n",
                 out_path.c_str(), scene.width, scene.height, seq, layer,
                 heads.size() > 1 ? "all heads" : ("head " + std::to_string(head)).c_str());
  }
  if (args.has("json")) {
    nlohmann::json j;
    j["model"] = model_path;
    j["layer"] = layer;
    j["heads"] = heads;
    j["tokens"] = figure.tokens;
    j["ids"] = ids;
    nlohmann::json maps = nlohmann::json::array();
    for (const std::vector<float>& m : figure.maps) {
      nlohmann::json rows = nlohmann::json::array();
      for (int q = 0; q < seq; ++q)
        rows.push_back(std::vector<float>(m.begin() + static_cast<ptrdiff_t>(q) * seq,
                                          m.begin() + static_cast<ptrdiff_t>(q + 1) * seq));
      maps.push_back(std::move(rows));
    }
    j["attention"] = std::move(maps);
    // Tokens from a vocabulary may hold malformed UTF-8: replace it rather than fail the dump.
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  }
  return 0;
}

}  // namespace encrt::cli
