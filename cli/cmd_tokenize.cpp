// encrt tokenize MODEL (--text TEXT | --file FILE) [--max-length N] [--pieces]: text to input ids
// with the model's vocabulary, one line of space-separated ids per text (each line of FILE is a
// text; "-" reads standard input).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

#include "cli/args.h"
#include "cli/commands.h"
#include "encrt/encrt.hpp"

namespace encrt::cli {

namespace {
int fail(const Status& s) {
  std::fprintf(stderr, "encrt tokenize: %s\n", s.to_string().c_str());
  return 1;
}
}  // namespace

int cmd_tokenize(int argc, char** argv) {
  Args args({"text", "file", "max-length"}, {"help", "pieces"});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  if (args.has("help") || args.positional().size() != 1 || args.has("text") == args.has("file")) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt tokenize MODEL (--text TEXT | --file FILE) [--max-length N] [--pieces]\n"
                 "  prints [CLS] word pieces [SEP] as ids, one line per text (each line of FILE is a text;\n"
                 "  FILE - reads standard input); --pieces prints the pieces' text instead of their ids;\n"
                 "  --max-length cuts each line to N ids (default: the model's max_seq_len)\n");
    return args.has("help") ? 0 : 2;
  }
  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  std::unique_ptr<Tokenizer> tokenizer;
  if (Status s = Tokenizer::create(*model, &tokenizer); !s) return fail(s);
  int max_length = 0;
  if (Status s = args.get_int("max-length", model->config().max_seq_len, &max_length); !s) return fail(s);

  const std::vector<std::string>& vocab = model->vocabulary();
  std::vector<int32_t> ids;
  auto emit = [&](const std::string& text) -> Status {
    if (Status s = tokenizer->encode(text, max_length, &ids); !s) return s;
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) line += ' ';
      line += args.has("pieces") ? vocab[static_cast<size_t>(ids[i])] : std::to_string(ids[i]);
    }
    std::printf("%s\n", line.c_str());
    return Status::ok();
  };
  if (args.has("text")) {
    if (Status s = emit(args.get("text")); !s) return fail(s);
    return 0;
  }
  const std::string path = args.get("file");
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return fail(Status(StatusCode::kIoError, "cannot open '" + path + "'"));
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::string text;
  size_t line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    if (Status s = emit(text); !s)
      return fail(Status(s.code(), "line " + std::to_string(line_no) + ": " + s.message()));
  }
  return 0;
}

}  // namespace encrt::cli
