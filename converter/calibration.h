// Calibration inputs for quantization: token ids the converter runs the fp32 and the quantized
// model on, to measure activation ranges and the accuracy the quantized model keeps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "converter/convert.h"

namespace encrt::converter {

// [count, seq] ids with a [count, seq] mask (1 real, 0 padding).
struct CalibrationSet {
  int count = 0;
  int seq = 0;
  std::vector<int32_t> ids;
  std::vector<int32_t> mask;
  std::string description;  // for reports and metadata
};

// Reads an int32/int64 .npy [count, seq] (or [seq]) of token ids. Trailing ids equal to the
// vocabulary's [PAD] id (0 when the model has no vocabulary) are padding. Every id must be in
// [0, vocab_size) and seq <= the model's maximum sequence length.
Status load_calibration_ids(const std::string& path, const SourceModel& model, CalibrationSet* out);

// `count` synthetic sequences of random vocabulary ids (fixed seed): a third 3..8 tokens long,
// the rest spread over [8, min(128, max_seq_len)], framed by [CLS] ... [SEP] when the vocabulary
// has them. Random tokens are no substitute for real text (pass --calibration ids of real text
// when you have them), but they exercise every length and the whole embedding table.
CalibrationSet synthetic_calibration(const SourceModel& model, int count = 48, uint32_t seed = 20261129);

}  // namespace encrt::converter
