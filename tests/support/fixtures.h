// Test helpers shared by the suites: the PyTorch golden fixtures (tests/fixtures), converting
// them to .encrt files, and comparing outputs on real (unpadded) tokens.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "npy/npy.h"
#include "converter/convert.h"
#include "converter/int8_quantizer.h"
#include "encrt/encrt.hpp"

namespace encrt::test {

struct Fixture {
  std::string name;
  std::string dir;
  int batch = 0, seq = 0, hidden = 0, heads = 0;
  bool has_token_types = false, has_pooler = false, has_probs = false;
  npy::Int32Array ids, mask, token_types;
  npy::Float32Array hidden_state, pooled, pooler, probs_layer1;
};

std::vector<std::string> fixture_names();  // from tests/fixtures/manifest.json
Fixture load_fixture(const std::string& name);  // REQUIREs that every file loads

// Converts the fixture's checkpoint to ENCRT_TEST_TMP_DIR/<name>.<suffix>.encrt; REQUIREs success.
std::string convert_fixture(const Fixture& f, converter::WeightType type, const std::string& pooling = "",
                            const std::string& suffix = "");

// The fixture's inputs (its ids, mask and, where it has them, token types) at its full shape.
Inputs fixture_inputs(const Fixture& f);

// Runs a session over the fixture's inputs; REQUIREs success.
std::unique_ptr<Session> run_fixture(const Model& model, const Fixture& f, const SessionOptions& options);

// sqrt(mean(x^2)) over the real tokens of a [batch, seq, width] array.
double rms_on_real_tokens(const float* x, const Fixture& f, int width);
// max |a - b| over the real tokens of two [batch, seq, width] arrays.
double max_abs_diff_on_real_tokens(const float* a, const float* b, const Fixture& f, int width);
// Cosine similarity of row i of two [rows, width] arrays.
double cosine(const float* a, const float* b, int width);

std::string tmp_path(const std::string& file);

// Converts the bert_plain fixture's checkpoint with `vocab` (vocab.txt, one token per line) and
// `tokenizer_config` (tokenizer_config.json) to ENCRT_TEST_TMP_DIR/<name>/model.encrt, so that
// text tokenizes; returns its path. REQUIREs success.
std::string bert_plain_with_vocab(const std::string& name, const std::vector<std::string>& vocab,
                                  const std::string& tokenizer_config = "{}");
// The same for any checkpoint folder under tests/fixtures (e.g. "heads/bert_token").
std::string checkpoint_with_vocab(const std::string& fixture, const std::string& name,
                                  const std::vector<std::string>& vocab, const std::string& tokenizer_config = "{}");

}  // namespace encrt::test
