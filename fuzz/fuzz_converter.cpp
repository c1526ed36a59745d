// Fuzz target: the converter's parsing of a checkpoint, config.json and model.safetensors, in
// memory. The safetensors image is parsed on its own (every tensor's range inside the image, every
// float tensor read), then config + image go through read_source_from_memory (config keys and
// types, the family's tensor names and shapes, the checks before writing). A source that reads
// must then build into a .encrt buffer (fp32, fp16 or int8 weights; the last two may refuse values
// beyond fp16's range) that the runtime loads and runs: what the converter writes, the runtime accepts.
//
// Input: byte 0 = options (bits 0-1: weight type f32, f16, i8, f32; bits 2-4: --pooling "", mean,
// cls, pooler, max, or a name that must be refused; bit 5: --head none); then config.json up to
// the first NUL byte; then the model.safetensors image.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "converter/convert.h"
#include "converter/safetensors_reader.h"
#include "encrt/encrt.hpp"
#include "fuzz/fuzz_check.h"

namespace {

using encrt::fuzz::require;
namespace cv = encrt::converter;

// Sources with more weights than this are not built (the fuzzer's inputs are a few KB; only a
// table the converter computes itself, the sinusoidal positions, can be large).
constexpr size_t kMaxBuildFloats = size_t{1} << 22;

void parse_safetensors(const uint8_t* data, size_t size) {
  cv::SafetensorsFile file;
  if (!file.parse(data, size, "fuzz.safetensors")) return;
  for (const cv::SafetensorsTensor& t : file.tensors()) {
    require(t.begin <= t.end && file.bytes(t) + (t.end - t.begin) <= data + size, "a tensor lies inside the image");
    require(file.find(t.name) == &t, "a tensor is found by its name");
    const size_t item = cv::safetensors_dtype_size(t.dtype);
    require(item > 0 && (t.end - t.begin) % item == 0, "a tensor's bytes are whole elements");
    std::vector<float> values;
    if (file.read_float(t, &values))
      require(values.size() == (t.end - t.begin) / item, "a float tensor reads one value per element");
  }
}

void run_built(const std::vector<uint8_t>& bytes) {
  const encrt::fuzz::AlignedCopy file(bytes.data(), bytes.size());
  std::unique_ptr<encrt::Model> model;
  const encrt::Status loaded = encrt::Model::from_buffer(file.data(), file.size(), &model);
  require(loaded.is_ok(), "the runtime loads what the converter writes", loaded.message().c_str());
  encrt::SessionOptions opt;
  opt.max_seq = std::min(2, model->config().max_seq_len);
  opt.backend = "cpu";
  size_t arena = 0;
  if (!encrt::Session::arena_size(*model, opt, &arena) || arena > (size_t{64} << 20)) return;
  std::unique_ptr<encrt::Session> session;
  const encrt::Status created = encrt::Session::create(*model, opt, &session);
  require(created.is_ok(), "a converted model gets a session", created.message().c_str());
  std::vector<int32_t> ids(static_cast<size_t>(opt.max_seq));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((i * 31) % model->config().vocab_size);
  encrt::Inputs in;
  in.batch = 1;
  in.seq = opt.max_seq;
  in.input_ids = ids.data();
  const encrt::Status ran = session->run(in);
  require(ran.is_ok(), "a converted model runs", ran.message().c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t options = data[0];
  const uint8_t* rest = data + 1;
  const size_t rest_size = size - 1;
  const void* nul = std::memchr(rest, 0, rest_size);
  const size_t config_size = nul ? static_cast<size_t>(static_cast<const uint8_t*>(nul) - rest) : rest_size;
  const std::string config(reinterpret_cast<const char*>(rest), config_size);
  const uint8_t* image = nul ? rest + config_size + 1 : rest + rest_size;
  const size_t image_size = nul ? rest_size - config_size - 1 : 0;

  parse_safetensors(image, image_size);

  static const char* const kPoolings[8] = {"", "mean", "cls", "pooler", "max", "", "sum", "mean "};
  const char* pooling = kPoolings[(options >> 2) & 7];
  const std::string head = (options & 0x20) ? "none" : "";
  cv::SourceModel src;
  const encrt::Status read = cv::read_source_from_memory(config, image, image_size, pooling, head, &src);
  const bool bad_pooling = std::string(pooling) == "sum" || std::string(pooling) == "mean ";
  if (bad_pooling) require(!read.is_ok(), "an unknown --pooling is refused");
  if (!read) return 0;
  require(!src.vocabulary.has_value(), "an in-memory source has no vocabulary");

  size_t floats = 0;
  for (const auto& entry : src.tensors) floats += entry.second.data.size();
  if (floats > kMaxBuildFloats) return 0;
  cv::ConvertOptions opt;
  opt.output_path = "in-memory.encrt";  // build_model writes nothing; the path names the result
  const int type = options & 3;
  opt.weight_type = type == 1 ? cv::WeightType::kF16 : type == 2 ? cv::WeightType::kI8 : cv::WeightType::kF32;
  std::vector<uint8_t> bytes;
  const encrt::Status built = cv::build_model(src, opt, &bytes);
  // fp16 refuses values beyond its range (kUnsupported, naming the tensor), and int8 models keep
  // their position and token-type tables in fp16 too; nothing else may fail.
  if (opt.weight_type != cv::WeightType::kF32 && built.code() == encrt::StatusCode::kUnsupported) return 0;
  require(built.is_ok(), "a source that reads builds", built.message().c_str());
  run_built(bytes);
  return 0;
}
