// Text in, sentence embeddings out, in C++ alone: the model's own tokenizer, one batched run,
// L2-normalized pooled vectors, and their cosine similarities.
//
//   encrt_sentence_embeddings MODEL.encrt "first sentence" "second sentence" [...] [--threads T]
//
// With all-MiniLM-L6-v2 (any of fp32, fp16, int8) the vectors are that model's sentence
// embeddings: related sentences score high, unrelated ones near zero.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"

namespace {

int fail(const encrt::Status& s) {
  std::fprintf(stderr, "encrt_sentence_embeddings: %s\n", s.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> texts;
  int threads = 1;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else {
      texts.emplace_back(argv[i]);
    }
  }
  if (argc < 3 || texts.empty()) {
    std::fprintf(stderr, "usage: encrt_sentence_embeddings MODEL.encrt SENTENCE [SENTENCE ...] [--threads T]\n");
    return 2;
  }
  std::unique_ptr<encrt::Model> model;
  if (encrt::Status s = encrt::Model::load(argv[1], &model); !s) return fail(s);
  std::unique_ptr<encrt::Tokenizer> tokenizer;
  if (encrt::Status s = encrt::Tokenizer::create(*model, &tokenizer); !s) return fail(s);

  // Tokenize, then pad every row to the longest with [PAD] and mask the padding out.
  const int max_length = model->config().max_seq_len;
  std::vector<std::vector<int32_t>> rows(texts.size());
  int seq = 1;
  for (size_t i = 0; i < texts.size(); ++i) {
    if (encrt::Status s = tokenizer->encode(texts[i], max_length, &rows[i]); !s) return fail(s);
    seq = std::max(seq, static_cast<int>(rows[i].size()));
  }
  const int batch = static_cast<int>(texts.size());
  const int32_t pad = tokenizer->pad_id() >= 0 ? tokenizer->pad_id() : 0;
  std::vector<int32_t> ids(static_cast<size_t>(batch) * seq, pad), mask(ids.size(), 0);
  for (int b = 0; b < batch; ++b)
    for (size_t t = 0; t < rows[b].size(); ++t) {
      ids[static_cast<size_t>(b) * seq + t] = rows[b][t];
      mask[static_cast<size_t>(b) * seq + t] = 1;
    }

  encrt::SessionOptions options;
  options.max_batch = batch;
  options.max_seq = seq;
  options.threads = threads;
  std::unique_ptr<encrt::Session> session;
  if (encrt::Status s = encrt::Session::create(*model, options, &session); !s) return fail(s);
  encrt::Inputs in;
  in.batch = batch;
  in.seq = seq;
  in.input_ids = ids.data();
  in.attention_mask = mask.data();
  if (encrt::Status s = session->run(in); !s) return fail(s);

  // The model's pooling (mean over real tokens for sentence-transformers models), L2-normalized.
  const int hidden = model->config().hidden_size;
  std::vector<std::vector<double>> emb(static_cast<size_t>(batch), std::vector<double>(static_cast<size_t>(hidden)));
  for (int b = 0; b < batch; ++b) {
    const float* v = session->pooled() + static_cast<size_t>(b) * hidden;
    double norm = 0;
    for (int d = 0; d < hidden; ++d) norm += static_cast<double>(v[d]) * v[d];
    norm = std::sqrt(norm);
    for (int d = 0; d < hidden; ++d) emb[b][d] = norm > 0 ? v[d] / norm : 0.0;
    std::printf("[%d] %zu tokens, embedding [%+.4f %+.4f %+.4f %+.4f ...]  %s\n", b, rows[b].size(), emb[b][0],
                emb[b][1], emb[b][2], emb[b][3], texts[b].c_str());
  }
  if (batch > 1) {
    std::printf("cosine similarity:\n     ");
    for (int j = 0; j < batch; ++j) std::printf(" %6d", j);
    std::printf("\n");
    for (int i = 0; i < batch; ++i) {
      std::printf("[%d]  ", i);
      for (int j = 0; j < batch; ++j) {
        double c = 0;
        for (int d = 0; d < hidden; ++d) c += emb[i][d] * emb[j][d];
        std::printf(" %6.3f", c);
      }
      std::printf("\n");
    }
  }
  return 0;
}
