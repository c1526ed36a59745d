#include "converter/int8_quantizer.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>

#include "encrt/encrt.hpp"

namespace encrt::converter {

namespace {

constexpr int kCalibrationBatch = 8;

// One model's outputs on the calibration set: per layer, the hidden state of every real token
// (rows in calibration order), and the pooled output of every sequence.
struct Observed {
  std::vector<std::vector<float>> layer_rows;  // [layer][real token * hidden]
  std::vector<float> pooled;                   // [count * hidden]
  std::map<std::string, std::vector<float>> input_absmax;  // linear label -> [K], when collected
  std::vector<float> logits;  // the head's: [count * labels], per real token for a token classifier
};

struct AlignedBuffer {
  explicit AlignedBuffer(const std::vector<uint8_t>& bytes) : size(bytes.size()) {
    // posix_memalign: Android's libc has C11 aligned_alloc only from API 28 (session_builder.cpp).
    void* p = nullptr;
    data = posix_memalign(&p, 64, size > 0 ? size : 64) == 0 ? static_cast<unsigned char*>(p) : nullptr;
    if (data) std::memcpy(data, bytes.data(), size);
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  unsigned char* data;
  size_t size;
};

bool is_layer_linear(const std::string& label) {
  for (const char* suffix : {".attention.qkv", ".attention.out", ".ffn.up", ".ffn.down"}) {
    const size_t n = std::strlen(suffix);
    if (label.size() > n && label.compare(label.size() - n, n, suffix) == 0 && label.compare(0, 7, "layers.") == 0)
      return true;
  }
  return false;
}

// Builds the model that `src`/`options` describe in memory and runs it over the calibration set.
Status observe(const SourceModel& src, const ConvertOptions& options, const CalibrationSet& cal, int threads,
               bool collect_ranges, Observed* out, const std::string& stage = "") {
  ConvertOptions quiet = options;
  quiet.log = nullptr;
  quiet.progress = nullptr;
  std::vector<uint8_t> bytes;
  if (Status s = build_model(src, quiet, &bytes); !s) return s;
  AlignedBuffer buffer(bytes);
  if (!buffer.data) return out_of_memory("cannot allocate " + std::to_string(bytes.size()) + " bytes for calibration");
  std::unique_ptr<Model> model;
  if (Status s = Model::from_buffer(buffer.data, buffer.size, &model); !s) return s;
  const ModelConfig& c = model->config();
  const int H = c.hidden_size;
  SessionOptions opt;
  opt.max_batch = std::min(kCalibrationBatch, cal.count);
  opt.max_seq = cal.seq;
  opt.threads = threads;
  // The CPU backend, whatever else the machine has: the observer reads every op's rows on the host
  // and the pooled output below is read in place. Under "auto" a GPU machine would place them in
  // device memory (Session::pooled() is then null: the crash the first GPU run of the conformance
  // suite met).
  opt.backend = "cpu";
  std::unique_ptr<Session> session;
  if (Status s = Session::create(*model, opt, &session); !s) return s;

  out->layer_rows.assign(static_cast<size_t>(c.num_layers), {});
  out->pooled.clear();
  out->input_absmax.clear();
  const int batches = (cal.count + kCalibrationBatch - 1) / kCalibrationBatch;
  for (int first = 0; first < cal.count; first += kCalibrationBatch) {
    if (options.progress && !stage.empty()) options.progress(stage, first / kCalibrationBatch, batches);
    const int batch = std::min(kCalibrationBatch, cal.count - first);
    const size_t offset = static_cast<size_t>(first) * cal.seq;
    const int32_t* mask = cal.mask.data() + offset;
    std::vector<std::vector<float>> last_output(static_cast<size_t>(c.num_layers));
    auto observer = [&](const OpOutput& op) {
      if (collect_ranges && op.input && is_layer_linear(op.label)) {
        std::vector<float>& m = out->input_absmax[op.label];
        m.resize(static_cast<size_t>(op.input_width), 0.0f);
        for (int r = 0; r < op.rows; ++r) {
          if (!mask[r]) continue;
          const float* x = op.input + static_cast<size_t>(r) * op.input_width;
          for (int k = 0; k < op.input_width; ++k) m[static_cast<size_t>(k)] = std::max(m[static_cast<size_t>(k)], std::fabs(x[k]));
        }
      }
      // The last op of a layer that writes hidden rows holds the layer's output.
      if (op.layer >= 0 && op.output && op.output_width == H && op.rows == batch * cal.seq)
        last_output[static_cast<size_t>(op.layer)].assign(op.output, op.output + static_cast<size_t>(op.rows) * H);
    };
    Inputs in{batch, cal.seq, cal.ids.data() + offset, mask, nullptr};
    if (Status s = session->run(in, observer); !s) return s;
    for (int l = 0; l < c.num_layers; ++l) {
      std::vector<float>& rows = out->layer_rows[static_cast<size_t>(l)];
      const std::vector<float>& o = last_output[static_cast<size_t>(l)];
      for (int r = 0; r < batch * cal.seq; ++r)
        if (mask[r]) rows.insert(rows.end(), o.begin() + static_cast<ptrdiff_t>(r) * H, o.begin() + static_cast<ptrdiff_t>(r + 1) * H);
    }
    if (!session->pooled()) return internal_error("calibration: the pooled output is not in host memory");
    out->pooled.insert(out->pooled.end(), session->pooled(), session->pooled() + static_cast<size_t>(batch) * H);
    if (model->has_head()) {
      OutputInfo logits;
      if (Status s = session->output("logits", &logits); !s) return s;
      if (logits.device != "host") return internal_error("calibration: the logits are not in host memory");
      const float* z = static_cast<const float*>(logits.data);
      const size_t n = static_cast<size_t>(logits.shape.back());
      if (logits.shape.size() == 2) {
        out->logits.insert(out->logits.end(), z, z + static_cast<size_t>(batch) * n);
      } else {
        for (int r = 0; r < batch * cal.seq; ++r)
          if (mask[r]) out->logits.insert(out->logits.end(), z + r * n, z + (r + 1) * n);
      }
    }
  }
  if (options.progress && !stage.empty()) options.progress(stage, batches, batches);
  return Status::ok();
}

double cosine(const float* a, const float* b, int n) {
  double ab = 0, aa = 0, bb = 0;
  for (int i = 0; i < n; ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  if (aa == 0.0 && bb == 0.0) return 1.0;
  if (aa == 0.0 || bb == 0.0) return 0.0;
  return ab / std::sqrt(aa * bb);
}

// Mean and min cosine between matching rows of two [rows, width] arrays.
void row_cosines(const std::vector<float>& ref, const std::vector<float>& got, int width, double* mean, double* min) {
  const size_t rows = ref.size() / static_cast<size_t>(width);
  double sum = 0.0, lo = 1.0;
  for (size_t r = 0; r < rows; ++r) {
    const double c = cosine(ref.data() + r * width, got.data() + r * width, width);
    sum += c;
    lo = std::min(lo, c);
  }
  *mean = rows ? sum / static_cast<double>(rows) : 1.0;
  *min = rows ? lo : 1.0;
}

struct Trial {
  std::vector<LayerAccuracy> layers;
  double pooled_mean = 0.0, pooled_min = 0.0;
  double label_agreement = 1.0, max_logit_error = 0.0;
};

// The decisions a head's logits stand for: the argmax of a single-label head's row, else (multi-label
// and one-logit heads) each logit's sign, the score > 0.5 decision; a regression head with several
// outputs makes none.
enum class Decisions { kNone, kArgmax, kSign };
Decisions decisions_of(const HeadSpec& h) {
  if (h.kind == HeadKind::kNone) return Decisions::kNone;
  if (h.kind == HeadKind::kTokenClassification) return Decisions::kArgmax;
  if (h.problem_type == ProblemType::kMultiLabel || h.num_labels() == 1) return Decisions::kSign;
  return h.problem_type == ProblemType::kSingleLabel ? Decisions::kArgmax : Decisions::kNone;
}

int argmax(const float* z, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (z[i] > z[best]) best = i;
  return best;
}

// Share of `got`'s decisions equal to `ref`'s, and the largest logit difference.
void compare_logits(const HeadSpec& h, const std::vector<float>& ref, const std::vector<float>& got, double* agreement,
                    double* max_error, long* count) {
  const int n = h.num_labels();
  const size_t rows = ref.size() / static_cast<size_t>(n);
  long same = 0, total = 0;
  *max_error = 0.0;
  for (size_t r = 0; r < rows; ++r) {
    const float* a = ref.data() + r * n;
    const float* b = got.data() + r * n;
    for (int i = 0; i < n; ++i) *max_error = std::max(*max_error, std::fabs(static_cast<double>(a[i]) - b[i]));
    switch (decisions_of(h)) {
      case Decisions::kArgmax:
        same += argmax(a, n) == argmax(b, n);
        ++total;
        break;
      case Decisions::kSign:
        for (int i = 0; i < n; ++i, ++total) same += (a[i] > 0.0f) == (b[i] > 0.0f);
        break;
      case Decisions::kNone:
        break;
    }
  }
  *agreement = total ? static_cast<double>(same) / static_cast<double>(total) : 1.0;
  if (count) *count = total;
}

Status evaluate(const SourceModel& src, const ConvertOptions& options, const CalibrationSet& cal, int threads,
                const Observed& reference, Trial* trial, const std::string& stage = "") {
  Observed got;
  if (Status s = observe(src, options, cal, threads, false, &got, stage); !s) return s;
  const int H = src.config.hidden_size;
  trial->layers.assign(reference.layer_rows.size(), {});
  for (size_t l = 0; l < reference.layer_rows.size(); ++l) {
    row_cosines(reference.layer_rows[l], got.layer_rows[l], H, &trial->layers[l].mean_cosine, &trial->layers[l].min_cosine);
    trial->layers[l].fp16 = options.layer_weight_types[l] == WeightType::kF16;
  }
  row_cosines(reference.pooled, got.pooled, H, &trial->pooled_mean, &trial->pooled_min);
  if (src.config.head.kind != HeadKind::kNone)
    compare_logits(src.config.head, reference.logits, got.logits, &trial->label_agreement, &trial->max_logit_error, nullptr);
  return Status::ok();
}

void compute_smoothing(SourceModel* src, const Observed& reference, double alpha) {
  src->smoothing.clear();
  if (alpha <= 0.0) return;
  for (const auto& [label, absmax] : reference.input_absmax) {
    const std::string weight = label + ".weight";
    const auto it = src->tensors.find(weight);
    if (it == src->tensors.end()) continue;
    const FloatTensor& w = it->second;
    const int N = static_cast<int>(w.shape[0]), K = static_cast<int>(w.shape[1]);
    if (static_cast<int>(absmax.size()) != K) continue;
    std::vector<float> s(static_cast<size_t>(K), 1.0f);
    for (int k = 0; k < K; ++k) {
      float wmax = 0.0f;
      for (int n = 0; n < N; ++n) wmax = std::max(wmax, std::fabs(w.data[static_cast<size_t>(n) * K + k]));
      const float xmax = absmax[static_cast<size_t>(k)];
      if (xmax <= 0.0f || wmax <= 0.0f) continue;
      const double f = std::pow(static_cast<double>(xmax), alpha) / std::pow(static_cast<double>(wmax), 1.0 - alpha);
      s[static_cast<size_t>(k)] = static_cast<float>(std::clamp(f, 1e-4, 1e4));
    }
    src->smoothing[weight] = std::move(s);
  }
}

}  // namespace

std::string QuantizationReport::to_text() const {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(6);
  s << "accuracy kept (cosine vs fp32 on " << calibration << "):\n";
  s << "  layer  weights  token mean  token min\n";
  for (size_t l = 0; l < layers.size(); ++l)
    s << "  " << (l < 10 ? "    " : "   ") << l << "  " << (layers[l].fp16 ? "fp16   " : "int8   ") << "  "
      << layers[l].mean_cosine << "   " << layers[l].min_cosine << "\n";
  s << "  pooled output per sequence: mean " << pooled_mean_cosine << ", min " << pooled_min_cosine << " (bar: min >= "
    << min_cosine_bar << ")\n";
  if (fp16_layers.empty()) {
    s << "  all layers int8\n";
  } else {
    s << "  kept in fp16 to meet the bar: layers";
    for (int l : fp16_layers) s << " " << l;
    s << " (all-int8 min was " << int8_only_min_cosine << ")\n";
  }
  if (!head_decisions.empty()) {
    s << "  head: " << (head_fp16 ? "fp16" : "int8") << " classifier; " << head_decisions << " (" << head_decision_count
      << "): agreement with fp32 " << label_agreement << " (bar: >= " << min_label_agreement_bar
      << "; all-int8: " << int8_only_label_agreement << "), max logit error " << max_logit_error << " (fp32 logit RMS "
      << logit_rms << ")\n";
  }
  if (!bar_met) s << "  WARNING: the bar is not met even with every layer in fp16\n";
  return s.str();
}

Status quantize_int8(SourceModel* src, ConvertOptions* options, const CalibrationSet& cal,
                     QuantizationReport* report) {
  struct {
    double min_cosine, smoothing_alpha, min_label_agreement;
    int threads;
  } const q{options->min_cosine, options->smoothing_alpha, options->min_label_agreement,
            std::max(1, options->calibration_threads)};
  if (options->weight_type != WeightType::kI8) return invalid_argument("quantize_int8 needs weight_type int8");
  if (cal.count < 1 || cal.seq < 1) return invalid_argument("the calibration set is empty");
  const int L = src->config.num_layers;
  auto progress = [&](const std::string& stage, int done, int total) {
    if (options->progress) options->progress(stage, done, total);
  };

  // 1. The fp32 reference, with activation ranges.
  ConvertOptions fp32 = *options;
  fp32.weight_type = WeightType::kF32;
  fp32.layer_weight_types.clear();
  fp32.head_weight_type.reset();
  SourceModel plain = *src;
  plain.smoothing.clear();
  Observed reference;
  if (Status s = observe(plain, fp32, cal, q.threads, true, &reference, "running fp32 on calibration"); !s) return s;

  // 2. Smoothing factors from the ranges.
  compute_smoothing(src, reference, q.smoothing_alpha);

  // 3. All layers int8, unless the caller chose the layers' types.
  const bool caller_chose = !options->layer_weight_types.empty();
  if (!caller_chose) options->layer_weight_types.assign(static_cast<size_t>(L), WeightType::kI8);
  const HeadSpec& head = src->config.head;
  const bool has_head = head.kind != HeadKind::kNone;
  if (!caller_chose && has_head) options->head_weight_type = WeightType::kI8;
  Trial best;
  if (Status s = evaluate(*src, *options, cal, q.threads, reference, &best, "running int8 on calibration"); !s)
    return s;
  report->int8_only_min_cosine = best.pooled_min;
  report->int8_only_label_agreement = best.label_agreement;
  auto met = [&](const Trial& t) { return t.pooled_min >= q.min_cosine && t.label_agreement >= q.min_label_agreement; };

  // 4. Guardrail: rank the layers (and the head's classifier, candidate L) by what keeping each
  //    alone in fp16 gains (label agreement first, then the pooled cosine), then add them in order.
  if (!caller_chose && !met(best)) {
    const int candidates = L + (has_head ? 1 : 0);
    auto keep_fp16 = [&](ConvertOptions* o, int c) {
      if (c < L) o->layer_weight_types[static_cast<size_t>(c)] = WeightType::kF16;
      else o->head_weight_type = WeightType::kF16;
    };
    std::vector<std::pair<std::pair<double, double>, int>> gain;
    for (int c = 0; c < candidates; ++c) {
      progress("ranking layers for fp16", c, candidates);
      ConvertOptions trial_options = *options;
      keep_fp16(&trial_options, c);
      Trial t;
      if (Status s = evaluate(*src, trial_options, cal, q.threads, reference, &t); !s) return s;
      gain.push_back({{t.label_agreement, t.pooled_min}, c});
    }
    progress("ranking layers for fp16", candidates, candidates);
    std::sort(gain.begin(), gain.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (int i = 0; i < candidates && !met(best); ++i) {
      progress("keeping layers in fp16", i, candidates);
      const int c = gain[static_cast<size_t>(i)].second;
      keep_fp16(options, c);
      if (c < L) report->fp16_layers.push_back(c);
      if (Status s = evaluate(*src, *options, cal, q.threads, reference, &best); !s) return s;
    }
    std::sort(report->fp16_layers.begin(), report->fp16_layers.end());
  }
  if (has_head) {
    static const char* const kWhat[] = {"no label decisions (a regression head)", "labels (argmax) per calibration sequence",
                                        "label decisions (logit > 0) per sequence and label"};
    report->head_decisions = head.kind == HeadKind::kTokenClassification ? "labels (argmax) per real calibration token"
                                                                           : kWhat[static_cast<int>(decisions_of(head))];
    double unused_agreement = 0.0, unused_error = 0.0;
    compare_logits(head, reference.logits, reference.logits, &unused_agreement, &unused_error, &report->head_decision_count);
    double sum = 0.0;
    for (float z : reference.logits) sum += static_cast<double>(z) * z;
    report->logit_rms = reference.logits.empty() ? 0.0 : std::sqrt(sum / static_cast<double>(reference.logits.size()));
    report->label_agreement = best.label_agreement;
    report->max_logit_error = best.max_logit_error;
    report->head_fp16 = options->head_weight_type == WeightType::kF16;
    report->min_label_agreement_bar = q.min_label_agreement;
  }
  report->calibration = cal.description;
  report->layers = best.layers;
  report->pooled_mean_cosine = best.pooled_mean;
  report->pooled_min_cosine = best.pooled_min;
  report->min_cosine_bar = q.min_cosine;
  report->bar_met = met(best);
  return Status::ok();
}

}  // namespace encrt::converter
