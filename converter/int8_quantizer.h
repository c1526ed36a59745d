// Int8 quantization with an accuracy guardrail.
//
// 1. Run the fp32 model on the calibration set and record, per linear layer, the largest |x| of
//    every input channel, plus every layer's output and the pooled output (the reference).
// 2. SmoothQuant (alpha = 0.5 by default): per input channel k of each int8 linear,
//    s_k = max|x_k|^alpha / max_n|W_nk|^(1-alpha); the weights' column k is multiplied by s_k and
//    the runtime multiplies activations by 1/s_k before its per-row quantization. This moves
//    the outlier channels of LayerNorm outputs (BERT has a few, 10-50x the others) into the
//    per-channel weight scales, where they cost little.
// 3. Build the int8 model, run it on the calibration set, and measure per layer the cosine of
//    every real token's hidden state against fp32, and per sequence the pooled output's cosine.
// 4. Guardrail: while the smallest pooled cosine is below `min_cosine` (or, for a model with a
//    classifier head, the share of its decisions that agree with fp32 is below
//    `min_label_agreement`), keep layers in fp16, most helpful first (each layer's benefit is
//    measured on its own, then layers are added in that order until the bar is met); the head's
//    classifier is a candidate like a layer. Skipped when options->layer_weight_types is already
//    set: the caller chose the layers' types.
//    What a head needs is checked on its own outputs, since a pooled-only check can hide
//    per-token damage: a sequence classifier's labels (argmax; for multi-label and one-logit heads
//    each logit's sign, i.e. score > 0.5) per calibration sequence, a token classifier's labels
//    per real token, and the largest logit error against fp32 in both cases.
#pragma once

#include <string>
#include <vector>

#include "converter/calibration.h"
#include "converter/convert.h"

namespace encrt::converter {

struct LayerAccuracy {
  double mean_cosine = 0.0;  // over real tokens of the calibration set
  double min_cosine = 0.0;
  bool fp16 = false;         // kept in fp16 by the guardrail
};

struct QuantizationReport {
  std::string calibration;
  std::vector<LayerAccuracy> layers;     // of the final model
  double pooled_mean_cosine = 0.0;       // of the final model, per calibration sequence
  double pooled_min_cosine = 0.0;
  double int8_only_min_cosine = 0.0;     // before the guardrail
  std::vector<int> fp16_layers;
  bool bar_met = false;
  double min_cosine_bar = 0.0;
  // The task head, when the model has one (head_decisions is empty otherwise).
  std::string head_decisions;            // what label_agreement counts, e.g. "labels per real token"
  long head_decision_count = 0;
  double label_agreement = 1.0;          // of the final model: share of decisions equal to fp32's
  double int8_only_label_agreement = 1.0;
  double max_logit_error = 0.0;          // max |logit - fp32 logit| of the final model
  double logit_rms = 0.0;                // of the fp32 logits, for scale
  bool head_fp16 = false;                // the classifier kept in fp16 by the guardrail
  double min_label_agreement_bar = 0.0;
  std::string to_text() const;           // the table printed by `encrt convert`
};

// Chooses smoothing and per-layer weight types for an int8 conversion, using options->min_cosine,
// smoothing_alpha and calibration_threads. On success `src->smoothing` and
// `options->layer_weight_types` are set (options->weight_type must be kI8) and `report`
// describes the accuracy kept; write_model(*src, *options) then writes the chosen model.
Status quantize_int8(SourceModel* src, ConvertOptions* options, const CalibrationSet& calibration,
                     QuantizationReport* report);

}  // namespace encrt::converter
