// SourceModel -> .encrt: chooses each tensor's stored dtype and layout, packs / quantizes it with
// the reference helpers the kernels are tested against, builds the FlatBuffer and writes it
// atomically (temp file in the output's directory, then rename).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include "converter/convert.h"
#include "converter/source_common.h"
#include "core/half.h"
#include "encrt_generated.h"
#include "kernels/kernel_types.h"
#include "kernels/ref/ref_kernels.h"
#include "model/checksums.h"
#include "model/tensor_names.h"

namespace encrt::converter {

namespace {

constexpr const char* kConverterVersion = "encrt 0.1.0";
constexpr size_t kDataAlignment = 64;  // schema: data: [ubyte] (force_align: 64)

// How one tensor is stored.
struct Encoding {
  fb::DType dtype = fb::DType::F32;
  fb::Layout layout = fb::Layout::RowMajor;
  int max_level = 127;  // I8 PanelN16K4: the largest |q| (63 for 7-bit weights)
};

struct EncodedTensor {
  std::vector<uint8_t> data;
  std::vector<float> scales;        // I8: per output channel / per row
  std::vector<int32_t> column_sums;  // I8 PanelN16K4
  std::vector<float> activation_multipliers;  // I8 PanelN16K4 with smoothing: 1 / s[k]
};

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// The layer index of "layers.L.<...>", or -1.
int layer_of(const std::string& name) {
  if (name.compare(0, 7, "layers.") != 0) return -1;
  const size_t dot = name.find('.', 7);
  if (dot == std::string::npos) return -1;
  return std::atoi(name.substr(7, dot - 7).c_str());
}

bool is_linear_weight(const std::string& name) {
  if (name == names::kPoolerWeight || name == names::kHeadClassifierWeight) return true;
  if (layer_of(name) < 0) return false;
  for (const char* w : {names::kQkvWeight, names::kAttnOutWeight, names::kFfnUpWeight,
                        names::kFfnDownWeight})
    if (ends_with(name, w)) return true;
  return false;
}

Encoding encoding_for(const std::string& name, const ConvertOptions& options) {
  if (is_linear_weight(name)) {
    const int l = layer_of(name);
    WeightType t = l >= 0 && !options.layer_weight_types.empty() ? options.layer_weight_types[static_cast<size_t>(l)]
                                                                  : options.weight_type;
    if (name == names::kHeadClassifierWeight && options.head_weight_type) t = *options.head_weight_type;
    switch (t) {
      case WeightType::kF32: return {fb::DType::F32, fb::Layout::PanelN16};
      case WeightType::kF16: return {fb::DType::F16, fb::Layout::PanelN16};
      case WeightType::kI8: return {fb::DType::I8, fb::Layout::PanelN16K4};
    }
  }
  if (name == names::kWordEmbeddings) {
    switch (options.weight_type) {
      case WeightType::kF32: return {fb::DType::F32, fb::Layout::RowMajor};
      case WeightType::kF16: return {fb::DType::F16, fb::Layout::RowMajor};
      case WeightType::kI8: return {fb::DType::I8, fb::Layout::RowMajor};
    }
  }
  if (name == names::kPositionEmbeddings || name == names::kTokenTypeEmbeddings)
    return {options.weight_type == WeightType::kF32 ? fb::DType::F32 : fb::DType::F16,
            fb::Layout::RowMajor};
  return {fb::DType::F32, fb::Layout::RowMajor};  // biases and norm parameters
}

// The largest |q| of an int8 linear's weights: 127, or with int8_weight_bits 7, 63 for every
// linear but the FFN's down projection. Its input, the GELU output, is the one 7-bit weights
// hurt most: all-MiniLM-L6-v2's 53 test sentences against PyTorch fp32, smallest cosine 0.9889
// with every linear at 7 bits, 0.9923 with the down projection at 8 (0.9952 all at 8); it is also
// the one the 7-bit AVX2 kernel speeds up least (K = 4 × hidden: its panel fills L1).
int int8_weight_levels(const std::string& name, const ConvertOptions& options) {
  const std::string down = names::kFfnDownWeight;
  const bool is_down = name.size() >= down.size() && name.compare(name.size() - down.size(), down.size(), down) == 0;
  return options.int8_weight_bits == 7 && !is_down ? 63 : 127;
}

// Bytes the encoded tensor occupies in the file (data + scales + column sums).
size_t encoded_bytes(const FloatTensor& t, const Encoding& e) {
  const int rows = static_cast<int>(t.shape.empty() ? 1 : t.shape[0]);
  switch (e.layout) {
    case fb::Layout::PanelN16: {
      const size_t n = kernels::panel_f32_size(rows, static_cast<int>(t.shape[1]));
      return n * (e.dtype == fb::DType::F16 ? 2 : 4);
    }
    case fb::Layout::PanelN16K4:
      return kernels::panel_i8_size(rows, static_cast<int>(t.shape[1])) + 8 * static_cast<size_t>(rows);
    case fb::Layout::RowMajor:
      break;
  }
  switch (e.dtype) {
    case fb::DType::F16: return t.data.size() * 2;
    case fb::DType::I8: return t.data.size() + 4 * static_cast<size_t>(rows);
    default: return t.data.size() * 4;
  }
}

// Values beyond fp16's range would silently become infinities.
Status check_half_range(const std::string& name, const std::vector<float>& values) {
  for (float v : values)
    if (std::fabs(v) > 65504.0f)
      return unsupported("tensor '" + name + "' holds " + std::to_string(v) +
                         ", outside the fp16 range (|x| <= 65504); convert it as f32");
  return Status::ok();
}

template <typename T>
void copy_bytes(const std::vector<T>& v, std::vector<uint8_t>* out) {
  out->resize(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out->data(), v.data(), out->size());
}

Status encode(const std::string& name, const FloatTensor& t, const Encoding& e, const std::vector<float>* smoothing,
              EncodedTensor* out) {
  const int rows = static_cast<int>(t.shape[0]);
  const int cols = t.shape.size() > 1 ? static_cast<int>(t.shape[1]) : 1;
  if (e.layout == fb::Layout::PanelN16 && e.dtype == fb::DType::F32) {
    std::vector<float> packed(kernels::panel_f32_size(rows, cols));
    kernels::ref::pack_weights_f32(rows, cols, t.data.data(), packed.data());
    copy_bytes(packed, &out->data);
  } else if (e.layout == fb::Layout::PanelN16 && e.dtype == fb::DType::F16) {
    Status st = check_half_range(name, t.data);
    if (!st) return st;
    std::vector<uint16_t> packed(kernels::panel_f32_size(rows, cols));
    kernels::ref::pack_weights_f16(rows, cols, t.data.data(), packed.data());
    copy_bytes(packed, &out->data);
  } else if (e.layout == fb::Layout::PanelN16K4) {
    std::vector<int8_t> packed(kernels::panel_i8_size(rows, cols));
    out->scales.resize(static_cast<size_t>(rows));
    out->column_sums.resize(static_cast<size_t>(rows));
    const float* weights = t.data.data();
    std::vector<float> smoothed;
    if (smoothing) {
      if (smoothing->size() != static_cast<size_t>(cols))
        return invalid_argument("smoothing for '" + name + "' has " + std::to_string(smoothing->size()) +
                                " factors, expected " + std::to_string(cols));
      smoothed = t.data;
      out->activation_multipliers.resize(static_cast<size_t>(cols));
      for (int k = 0; k < cols; ++k) {
        const float f = (*smoothing)[static_cast<size_t>(k)];
        if (!(std::isfinite(f) && f > 0.0f)) return invalid_argument("smoothing for '" + name + "' is not positive");
        out->activation_multipliers[static_cast<size_t>(k)] = 1.0f / f;
        for (int r = 0; r < rows; ++r) smoothed[static_cast<size_t>(r) * cols + k] *= f;
      }
      weights = smoothed.data();
    }
    kernels::ref::quantize_pack_weights_i8(rows, cols, weights, packed.data(),
                                          out->scales.data(), out->column_sums.data(), e.max_level);
    copy_bytes(packed, &out->data);
  } else if (e.dtype == fb::DType::F16) {
    Status st = check_half_range(name, t.data);
    if (!st) return st;
    std::vector<uint16_t> halves(t.data.size());
    for (size_t i = 0; i < halves.size(); ++i) halves[i] = float_to_half(t.data[i]);
    copy_bytes(halves, &out->data);
  } else if (e.dtype == fb::DType::I8) {
    // Row-wise symmetric int8 (embedding tables): scale = max|row| / 127, q = rint(x / scale).
    out->data.resize(t.data.size());
    out->scales.resize(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      const float* x = t.data.data() + static_cast<size_t>(r) * cols;
      float amax = 0.0f;
      for (int k = 0; k < cols; ++k) amax = std::max(amax, std::fabs(x[k]));
      // At least FLT_MIN, as for the linear weights (kernels/ref/quantize_ref.cpp): positive, normal.
      const float scale = amax > 0.0f ? std::max(amax / 127.0f, std::numeric_limits<float>::min()) : 1.0f;
      for (int k = 0; k < cols; ++k) {
        const float q = std::clamp(std::nearbyint(x[k] / scale), -127.0f, 127.0f);
        out->data[static_cast<size_t>(r) * cols + k] = static_cast<uint8_t>(static_cast<int8_t>(q));
      }
      out->scales[static_cast<size_t>(r)] = scale;
    }
  } else {
    copy_bytes(t.data, &out->data);
  }
  return Status::ok();
}

std::string megabytes(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

// Writes `size` bytes to a temp file next to `path`, then renames it over `path`, so that readers
// never see a half-written model and a failed conversion leaves any previous file intact.
Status write_file_atomically(const std::string& path, const uint8_t* data, size_t size) {
  // O_EXCL with a pid + counter name instead of mkstemp: mkstemp's 0600 mode would need a umask
  // dance (process-wide, racy) to give the model ordinary permissions.
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0)
    return io_error("cannot create a temporary file next to '" + path + "': " + std::strerror(errno));
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return io_error("cannot write '" + tmp + "': " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return io_error("cannot finish '" + tmp + "': " + std::strerror(err));
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return io_error("cannot close '" + tmp + "': " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return io_error("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(err));
  }
  return Status::ok();
}

fb::Architecture to_fb(Architecture a) {
  return a == Architecture::kBert ? fb::Architecture::Bert : fb::Architecture::TorchEncoder;
}
fb::Activation to_fb(Activation a) {
  return a == Activation::kGelu ? fb::Activation::Gelu : fb::Activation::Relu;
}
fb::NormPlacement to_fb(NormPlacement n) {
  return n == NormPlacement::kPreNorm ? fb::NormPlacement::PreNorm : fb::NormPlacement::PostNorm;
}
fb::PositionalEncoding to_fb(PositionalEncoding p) {
  return p == PositionalEncoding::kSinusoidal ? fb::PositionalEncoding::Sinusoidal
                                              : fb::PositionalEncoding::Learned;
}
fb::Pooling to_fb(Pooling p) {
  switch (p) {
    case Pooling::kMean: return fb::Pooling::Mean;
    case Pooling::kCls: return fb::Pooling::Cls;
    case Pooling::kPooler: return fb::Pooling::Pooler;
    case Pooling::kMax: return fb::Pooling::Max;
  }
  return fb::Pooling::Mean;
}
fb::HeadKind to_fb(HeadKind k) {
  return k == HeadKind::kTokenClassification ? fb::HeadKind::TokenClassification : fb::HeadKind::SequenceClassification;
}
fb::ProblemType to_fb(ProblemType p) {
  switch (p) {
    case ProblemType::kSingleLabel: return fb::ProblemType::SingleLabel;
    case ProblemType::kMultiLabel: return fb::ProblemType::MultiLabel;
    case ProblemType::kRegression: return fb::ProblemType::Regression;
  }
  return fb::ProblemType::SingleLabel;
}
fb::ScoreFunction to_fb(ScoreFunction f) {
  switch (f) {
    case ScoreFunction::kSoftmax: return fb::ScoreFunction::Softmax;
    case ScoreFunction::kSigmoid: return fb::ScoreFunction::Sigmoid;
    case ScoreFunction::kIdentity: return fb::ScoreFunction::Identity;
  }
  return fb::ScoreFunction::Softmax;
}

}  // namespace

Status build_model(const SourceModel& src, const ConvertOptions& options, std::vector<uint8_t>* out) {
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  if (options.output_path.empty()) return invalid_argument("no output path given");
  const SourceConfig& c = src.config;
  // The runtime's limit (model/model_loader.cpp); a window of max_seq_len - 1 or more is full attention.
  if (options.attention_window < 0 || options.attention_window > (1 << 20))
    return invalid_argument("attention window " + std::to_string(options.attention_window) +
                            " is out of range (0 = full attention, else 1.." + std::to_string(1 << 20) + ")");
  if (!options.layer_weight_types.empty() &&
      options.layer_weight_types.size() != static_cast<size_t>(c.num_layers))
    return invalid_argument("layer_weight_types has " +
                            std::to_string(options.layer_weight_types.size()) +
                            " entries; the model has " + std::to_string(c.num_layers) + " layers");
  if (options.int8_weight_bits != 7 && options.int8_weight_bits != 8)
    return invalid_argument("int8 weight bits must be 7 or 8, not " + std::to_string(options.int8_weight_bits));
  Status st = validate_source_model(src);
  if (!st) return st;

  // Metadata: ours, then the caller's; keys must be unique (the vector is sorted for lookup).
  std::vector<std::pair<std::string, std::string>> metadata = src.metadata;
  metadata.emplace_back("converter_version", kConverterVersion);
  metadata.emplace_back("weight_type", weight_type_name(options.weight_type));
  if (!options.layer_weight_types.empty()) {
    std::string per_layer;
    for (WeightType t : options.layer_weight_types)
      per_layer += (per_layer.empty() ? "" : ",") + std::string(weight_type_name(t));
    metadata.emplace_back("layer_weight_types", per_layer);
  }
  if (options.int8_weight_bits != 8) metadata.emplace_back("int8_weight_bits", std::to_string(options.int8_weight_bits));
  if (c.head.kind != HeadKind::kNone)
    metadata.emplace_back("head_weight_type", weight_type_name(options.head_weight_type.value_or(options.weight_type)));
  metadata.insert(metadata.end(), options.extra_metadata.begin(), options.extra_metadata.end());
  std::set<std::string> keys;
  for (const auto& kv : metadata)
    if (!keys.insert(kv.first).second)
      return invalid_argument("duplicate metadata key '" + kv.first + "'");

  // Tensors in model order (embeddings, layer 0, 1, ..., then the rest), for progress lines.
  std::vector<const std::pair<const std::string, FloatTensor>*> order;
  for (const auto& entry : src.tensors)
    if (layer_of(entry.first) < 0 && entry.first.compare(0, 11, "embeddings.") == 0)
      order.push_back(&entry);
  for (int l = 0; l < c.num_layers; ++l) {
    const std::string prefix = "layers." + std::to_string(l) + ".";
    for (auto it = src.tensors.lower_bound(prefix);
         it != src.tensors.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
      order.push_back(&*it);
  }
  for (const auto& entry : src.tensors)
    if (layer_of(entry.first) < 0 && entry.first.compare(0, 11, "embeddings.") != 0)
      order.push_back(&entry);

  // FlatBuffers offsets are 32-bit signed: a buffer must stay below 2 GiB. Estimate generously
  // and refuse early rather than overflow inside the builder.
  size_t estimate = 4096;
  for (const auto* entry : order)
    estimate += encoded_bytes(entry->second, encoding_for(entry->first, options)) +
                kDataAlignment + entry->first.size() + 128;
  if (src.vocabulary)
    for (const std::string& tok : src.vocabulary->tokens) estimate += tok.size() + 12;
  for (const auto& kv : metadata) estimate += kv.first.size() + kv.second.size() + 32;
  const size_t limit = static_cast<size_t>(FLATBUFFERS_MAX_BUFFER_SIZE);
  if (estimate >= limit)
    return unsupported("the converted model would take about " + megabytes(estimate) +
                       ", more than a .encrt file can hold (2 GiB FlatBuffers limit); use f16 "
                       "or i8 weights");

  flatbuffers::FlatBufferBuilder b(estimate);
  std::vector<flatbuffers::Offset<fb::Tensor>> tensor_offsets;
  tensor_offsets.reserve(order.size());
  int last_layer_logged = -1;
  for (const auto* entry : order) {
    const std::string& name = entry->first;
    const FloatTensor& t = entry->second;
    const int l = layer_of(name);
    if (l >= 0 && l != last_layer_logged) {
      if (options.progress)
        options.progress(options.weight_type == WeightType::kF32 ? "packing weights" : "quantizing and packing weights",
                         l + 1, c.num_layers);
      else
        log("layer " + std::to_string(l + 1) + "/" + std::to_string(c.num_layers));
      last_layer_logged = l;
    }
    Encoding e = encoding_for(name, options);
    e.max_level = int8_weight_levels(name, options);
    EncodedTensor enc;
    const auto smooth = src.smoothing.find(name);
    if (!(st = encode(name, t, e, smooth == src.smoothing.end() ? nullptr : &smooth->second, &enc))) return st;
    b.ForceVectorAlignment(enc.data.size(), 1, kDataAlignment);
    const auto data = b.CreateVector(enc.data);
    const auto scales = enc.scales.empty() ? 0 : b.CreateVector(enc.scales);
    const auto sums = enc.column_sums.empty() ? 0 : b.CreateVector(enc.column_sums);
    const auto multipliers =
        enc.activation_multipliers.empty() ? 0 : b.CreateVector(enc.activation_multipliers);
    const auto shape = b.CreateVector(t.shape);
    const auto name_offset = b.CreateString(name);
    detail::TensorPayload payload;
    payload.data = enc.data.data(), payload.data_bytes = enc.data.size();
    payload.scales = enc.scales.data(), payload.scales_bytes = enc.scales.size() * sizeof(float);
    payload.column_sums = enc.column_sums.data(), payload.column_sums_bytes = enc.column_sums.size() * sizeof(int32_t);
    payload.activation_multipliers = enc.activation_multipliers.data();
    payload.activation_multipliers_bytes = enc.activation_multipliers.size() * sizeof(float);
    fb::TensorBuilder tb(b);
    tb.add_name(name_offset);
    tb.add_shape(shape);
    tb.add_dtype(e.dtype);
    tb.add_layout(e.layout);
    tb.add_data(data);
    if (!enc.scales.empty()) tb.add_scales(scales);
    if (!enc.column_sums.empty()) tb.add_column_sums(sums);
    if (!enc.activation_multipliers.empty()) tb.add_activation_multipliers(multipliers);
    tb.add_checksum(detail::tensor_payload_checksum(payload));
    tensor_offsets.push_back(tb.Finish());
  }
  const auto tensors = b.CreateVectorOfSortedTables(&tensor_offsets);

  flatbuffers::Offset<fb::Vocabulary> vocabulary = 0;
  if (src.vocabulary) {
    const Vocabulary& v = *src.vocabulary;
    const auto tokens = b.CreateVectorOfStrings(v.tokens);
    const fb::StripAccents strip = v.strip_accents == Vocabulary::StripAccents::kKeep    ? fb::StripAccents::Keep
                                   : v.strip_accents == Vocabulary::StripAccents::kStrip ? fb::StripAccents::Strip
                                                                                          : fb::StripAccents::FollowLowerCase;
    vocabulary = fb::CreateVocabulary(b, tokens, v.do_lower_case, v.unk_id, v.cls_id, v.sep_id,
                                      v.pad_id, v.mask_id, strip, v.tokenize_chinese_chars);
  }

  std::vector<flatbuffers::Offset<fb::KeyValue>> kv_offsets;
  for (const auto& kv : metadata)
    kv_offsets.push_back(fb::CreateKeyValue(b, b.CreateString(kv.first), b.CreateString(kv.second)));
  const auto meta = b.CreateVectorOfSortedTables(&kv_offsets);

  const auto config = fb::CreateConfig(
      b, to_fb(c.architecture), c.vocab_size, c.hidden_size, c.num_heads, c.num_layers, c.ffn_size,
      to_fb(c.activation), to_fb(c.norm_placement), c.layer_norm_eps, to_fb(c.positional_encoding),
      c.embedding_scale, c.max_seq_len, c.type_vocab_size, c.embedding_norm, c.final_norm,
      to_fb(c.pooling),
      options.weight_type == WeightType::kI8 && options.int8_attention ? fb::AttentionPrecision::Int8
                                                                       : fb::AttentionPrecision::Float,
      options.attention_window, c.normalize);
  flatbuffers::Offset<fb::Head> head = 0;
  if (c.head.kind != HeadKind::kNone)
    head = fb::CreateHead(b, to_fb(c.head.kind), to_fb(c.head.problem_type), to_fb(c.head.score_function),
                          b.CreateVectorOfStrings(c.head.labels), to_fb(c.head.pooling));
  // Version 1 where a version-1 runtime reads the file right (names::kFormatVersion says why): a
  // version-1 runtime would ignore a head, the normalization, max pooling and the attention window.
  const bool needs_v2 = c.head.kind != HeadKind::kNone || c.normalize || c.pooling == Pooling::kMax ||
                        options.attention_window > 0;
  fb::FinishModelBuffer(b, fb::CreateModel(b, needs_v2 ? names::kFormatVersion : names::kFormatVersionEncoderOnly,
                                           config, tensors, vocabulary, meta, head,
                                           /*structure_checksum=*/0));  // a placeholder, sealed below

  // Our own output must verify exactly as the runtime will verify it.
  flatbuffers::Verifier verifier(b.GetBufferPointer(), b.GetSize(), 64, 1000000, true);
  if (!fb::VerifyModelBuffer(verifier))
    return internal_error("the FlatBuffer built for '" + options.output_path + "' does not verify");

  out->assign(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  // The structure checksum covers the finished bytes, so it is computed last and written in place.
  return detail::seal_structure_checksum(out->data(), out->size());
}

Status write_model(const SourceModel& src, const ConvertOptions& options) {
  std::vector<uint8_t> buffer;
  if (Status st = build_model(src, options, &buffer); !st) return st;
  if (options.log) options.log("writing " + megabytes(buffer.size()) + " to " + options.output_path);
  return write_file_atomically(options.output_path, buffer.data(), buffer.size());
}

}  // namespace encrt::converter
