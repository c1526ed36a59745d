// Loads a model, runs one batch (2 sequences of 8 ids, the second with 3 padded positions) through
// the C++ API and prints the first values of each pooled row. app.c does the same in C; both
// print the same lines.
#include <cstdio>
#include <memory>
#include <vector>

#include <encrt/encrt.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.encrt\n", argv[0]);
    return 2;
  }
  std::unique_ptr<encrt::Model> model;
  if (auto s = encrt::Model::load(argv[1], &model); !s) {
    std::fprintf(stderr, "load: %s\n", s.to_string().c_str());
    return 1;
  }
  const int batch = 2, seq = 8, vocab = model->config().vocab_size;
  std::vector<int32_t> ids(batch * seq), mask(batch * seq);
  for (int b = 0; b < batch; ++b)
    for (int s = 0; s < seq; ++s) {
      ids[b * seq + s] = (1 + 7 * b + 5 * s) % vocab;
      mask[b * seq + s] = (b == 1 && s >= 5) ? 0 : 1;
    }

  encrt::SessionOptions opt;
  opt.max_batch = batch;
  opt.max_seq = seq;
  std::unique_ptr<encrt::Session> session;
  if (auto s = encrt::Session::create(*model, opt, &session); !s) {
    std::fprintf(stderr, "session: %s\n", s.to_string().c_str());
    return 1;
  }
  if (auto s = session->run({batch, seq, ids.data(), mask.data(), nullptr}); !s) {
    std::fprintf(stderr, "run: %s\n", s.to_string().c_str());
    return 1;
  }
  encrt::OutputInfo pooled;
  if (auto s = session->output("pooled", &pooled); !s) {
    std::fprintf(stderr, "output: %s\n", s.to_string().c_str());
    return 1;
  }
  const long long rows = pooled.shape[0], hidden = pooled.shape[1];
  const float* v = static_cast<const float*>(pooled.data);
  std::printf("encrt %s: pooled [%lld, %lld]\n", encrt::version(), rows, hidden);
  for (long long r = 0; r < rows; ++r) {
    std::printf("row %lld:", r);
    for (long long i = 0; i < 8 && i < hidden; ++i) std::printf(" %.6f", v[r * hidden + i]);
    std::printf("\n");
  }
  return 0;
}
