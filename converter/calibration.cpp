#include "converter/calibration.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "npy/npy.h"

namespace encrt::converter {

Status load_calibration_ids(const std::string& path, const SourceModel& model, CalibrationSet* out) {
  npy::Int32Array a;
  if (Status s = npy::read_int32(path, &a); !s) return s;
  if (a.shape.size() == 1) a.shape.insert(a.shape.begin(), 1);
  if (a.shape.size() != 2 || a.shape[0] < 1 || a.shape[1] < 1)
    return invalid_argument("calibration ids '" + path + "' must be a non-empty [count, seq] array");
  const SourceConfig& c = model.config;
  if (a.shape[1] > c.max_seq_len)
    return invalid_argument("calibration ids '" + path + "' have sequences of " + std::to_string(a.shape[1]) +
                            " tokens; the model takes at most " + std::to_string(c.max_seq_len));
  if (a.shape[0] > 100000) return invalid_argument("calibration ids '" + path + "' hold too many sequences");
  const int32_t pad = model.vocabulary && model.vocabulary->pad_id >= 0 ? model.vocabulary->pad_id : 0;
  out->count = static_cast<int>(a.shape[0]);
  out->seq = static_cast<int>(a.shape[1]);
  out->ids = a.data;
  out->mask.assign(a.data.size(), 1);
  for (int r = 0; r < out->count; ++r) {
    int end = out->seq;
    while (end > 1 && a.data[static_cast<size_t>(r) * out->seq + end - 1] == pad) --end;
    for (int t = 0; t < out->seq; ++t) {
      const size_t i = static_cast<size_t>(r) * out->seq + t;
      if (a.data[i] < 0 || a.data[i] >= c.vocab_size)
        return invalid_argument("calibration id " + std::to_string(a.data[i]) + " at [" + std::to_string(r) + ", " +
                                std::to_string(t) + "] is outside the vocabulary (0.." +
                                std::to_string(c.vocab_size - 1) + ")");
      out->mask[i] = t < end ? 1 : 0;
    }
  }
  out->description = path + " (" + std::to_string(out->count) + " sequences)";
  return Status::ok();
}

CalibrationSet synthetic_calibration(const SourceModel& model, int count, uint32_t seed) {
  const SourceConfig& c = model.config;
  std::mt19937 rng(seed);
  CalibrationSet set;
  set.count = count;
  set.seq = std::min(128, c.max_seq_len);
  set.ids.assign(static_cast<size_t>(count) * set.seq, 0);
  set.mask.assign(set.ids.size(), 0);
  const auto* v = model.vocabulary ? &*model.vocabulary : nullptr;
  const bool framed = v && v->cls_id >= 0 && v->sep_id >= 0;
  // Skip the low ids of a WordPiece vocabulary ([PAD], [unused*], special tokens) when it is big.
  const int first = c.vocab_size > 2000 ? 1000 : 0;
  // Ids drawn log-uniformly over [first, vocab): a Zipf-like law that favours low ids, which in
  // WordPiece vocabularies (BERT's among them) are the frequent words.
  std::uniform_real_distribution<double> log_rank(0.0, std::log(static_cast<double>(c.vocab_size - first)));
  auto token = [&](std::mt19937& g) {
    const int id = first + static_cast<int>(std::exp(log_rank(g))) - 1;
    return std::clamp(id, first, c.vocab_size - 1);
  };
  // A third of the sequences are very short (3..8 tokens): mean pooling over a few tokens
  // averages no quantization error away, so they are where int8 loses most.
  std::uniform_int_distribution<int> short_length(std::min(3, set.seq), std::min(8, set.seq));
  std::uniform_int_distribution<int> length(std::min(8, set.seq), set.seq);
  for (int r = 0; r < count; ++r) {
    const int len = r % 3 == 0 ? short_length(rng) : length(rng);
    for (int t = 0; t < len; ++t) {
      int id = token(rng);
      if (framed && t == 0) id = v->cls_id;
      if (framed && t == len - 1 && len > 1) id = v->sep_id;
      set.ids[static_cast<size_t>(r) * set.seq + t] = id;
      set.mask[static_cast<size_t>(r) * set.seq + t] = 1;
    }
  }
  set.description = "synthetic (" + std::to_string(count) + " random-token sequences)";
  return set;
}

}  // namespace encrt::converter
