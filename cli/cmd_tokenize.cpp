// encrt tokenize MODEL (--text TEXT [--pair TEXT2] | --file FILE [--pair-file FILE2]) [--max-length N]
//                [--truncation S] [--no-truncation] [--batch B] [--pieces] [--offsets] [--json]:
// text (or pairs of texts) to input ids with the model's vocabulary, one line per text (each line of
// FILE is a text, line i of FILE2 its pair; "-" reads standard input).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "encrt/encrt.hpp"

namespace encrt::cli {

namespace {

int fail(const Status& s) {
  std::fprintf(stderr, "encrt tokenize: %s\n", s.to_string().c_str());
  return 1;
}

Status read_lines(const std::string& path, std::vector<std::string>* lines) {
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) return Status(StatusCode::kIoError, "cannot open '" + path + "'");
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::string line;
  while (std::getline(in, line)) lines->push_back(line);
  return Status::ok();
}

// A JSON string: quotes, backslashes and control characters escaped, UTF-8 passed through.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string json_ints(const std::vector<int32_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}

std::string json_encoding(const Encoding& e) {
  std::string offsets = "[", tokens = "[";
  for (size_t i = 0; i < e.size(); ++i) {
    offsets += (i ? ",[" : "[") + std::to_string(e.offsets[i].start) + "," + std::to_string(e.offsets[i].end) + "]";
    tokens += (i ? "," : "") + json_string(e.tokens[i]);
  }
  return "{\"ids\":" + json_ints(e.ids) + ",\"token_type_ids\":" + json_ints(e.token_type_ids) +
         ",\"attention_mask\":" + json_ints(e.attention_mask) + ",\"special_tokens_mask\":" +
         json_ints(e.special_tokens_mask) + ",\"offsets\":" + offsets + "],\"word_ids\":" + json_ints(e.word_ids) +
         ",\"sequence_ids\":" + json_ints(e.sequence_ids) + ",\"tokens\":" + tokens + "]}";
}

// One line for people: ids (or pieces), each with its byte span when asked.
std::string text_line(const Encoding& e, bool pieces, bool offsets) {
  std::string line;
  for (size_t i = 0; i < e.size(); ++i) {
    if (i) line += ' ';
    line += pieces ? e.tokens[i] : std::to_string(e.ids[i]);
    if (offsets) line += "(" + std::to_string(e.offsets[i].start) + "," + std::to_string(e.offsets[i].end) + ")";
  }
  return line;
}

}  // namespace

int cmd_tokenize(int argc, char** argv) {
  Args args({"text", "pair", "file", "pair-file", "max-length", "truncation", "batch"},
            {"help", "pieces", "offsets", "json", "no-truncation"});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  const bool usage_ok = args.positional().size() == 1 && args.has("text") != args.has("file") &&
                        !(args.has("pair") && !args.has("text")) && !(args.has("pair-file") && !args.has("file"));
  if (args.has("help") || !usage_ok) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt tokenize MODEL (--text TEXT [--pair TEXT2] | --file FILE [--pair-file FILE2])\n"
                 "                      [--max-length N] [--truncation longest_first|only_first|only_second]\n"
                 "                      [--no-truncation] [--batch B] [--pieces] [--offsets] [--json]\n"
                 "  prints [CLS] word pieces [SEP] (a pair: [CLS] a [SEP] b [SEP]) as ids, one line per text\n"
                 "  (each line of FILE is a text, line i of FILE2 its second text; FILE - reads standard input);\n"
                 "  --pieces prints the pieces' text instead of their ids; --offsets adds each token's\n"
                 "  (start,end) UTF-8 byte span in its text; --max-length cuts each text or pair to N tokens\n"
                 "  (default: the model's max_seq_len) by --truncation (default longest_first), or with\n"
                 "  --no-truncation makes a longer one an error; --batch B pads each B lines to their longest\n"
                 "  with [PAD]; --json prints one object per line (ids, token_type_ids, attention_mask,\n"
                 "  special_tokens_mask, offsets, word_ids, sequence_ids, tokens), or {\"error\": ...} for a\n"
                 "  line that cannot be encoded, and goes on (the exit status is then 1)\n");
    return args.has("help") ? 0 : 2;
  }
  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  std::unique_ptr<Tokenizer> tokenizer;
  if (Status s = Tokenizer::create(*model, &tokenizer); !s) return fail(s);
  EncodeOptions options;
  if (Status s = args.get_int("max-length", model->config().max_seq_len, &options.max_length); !s) return fail(s);
  if (options.max_length <= 0) return fail(invalid_argument("--max-length must be at least 1"));
  if (args.has("truncation"))
    if (Status s = parse_truncation(args.get("truncation"), &options.truncation); !s) return fail(s);
  options.truncate = !args.has("no-truncation");
  int batch = 1;
  if (Status s = args.get_int("batch", 1, &batch); !s) return fail(s);
  if (batch < 1) return fail(invalid_argument("--batch must be at least 1"));

  std::vector<std::string> firsts, seconds;
  const bool pairs = args.has("pair") || args.has("pair-file");
  if (args.has("text")) {
    firsts.push_back(args.get("text"));
    if (pairs) seconds.push_back(args.get("pair"));
  } else {
    if (Status s = read_lines(args.get("file"), &firsts); !s) return fail(s);
    if (pairs)
      if (Status s = read_lines(args.get("pair-file"), &seconds); !s) return fail(s);
    if (pairs && seconds.size() != firsts.size())
      return fail(invalid_argument("--file has " + std::to_string(firsts.size()) + " lines and --pair-file " +
                                   std::to_string(seconds.size())));
  }

  const bool json = args.has("json");
  bool any_failed = false;
  for (size_t begin = 0; begin < firsts.size(); begin += static_cast<size_t>(batch)) {
    const size_t end = std::min(firsts.size(), begin + static_cast<size_t>(batch));
    BatchEncoding encoded;
    Status s;
    if (pairs) {
      std::vector<std::pair<std::string, std::string>> group;
      for (size_t i = begin; i < end; ++i) group.emplace_back(firsts[i], seconds[i]);
      s = tokenizer->encode_pair_batch(group, options, &encoded);
    } else {
      s = tokenizer->encode_batch(std::vector<std::string>(firsts.begin() + static_cast<ptrdiff_t>(begin),
                                                           firsts.begin() + static_cast<ptrdiff_t>(end)),
                                  options, &encoded);
    }
    if (!s) {
      const std::string where = end - begin == 1 ? "line " + std::to_string(begin + 1)
                                                 : "lines " + std::to_string(begin + 1) + "-" + std::to_string(end);
      if (!json) return fail(Status(s.code(), where + ": " + s.message()));
      any_failed = true;
      for (size_t i = begin; i < end; ++i) std::printf("{\"error\":%s}\n", json_string(where + ": " + s.message()).c_str());
      continue;
    }
    for (const Encoding& row : encoded.rows)
      std::printf("%s\n", json ? json_encoding(row).c_str()
                               : text_line(row, args.has("pieces"), args.has("offsets")).c_str());
  }
  return any_failed ? 1 : 0;
}

}  // namespace encrt::cli
