// Model integrity: every tensor of converted fixtures (fp32 and int8, with scales, column sums,
// activation multipliers, a pooler and head classifiers) carries a checksum, and one flipped byte
// in any part of any tensor's payload is caught by Model::verify_buffer / verify_file and by the
// load option verify_checksums, naming that tensor; a flip elsewhere is caught by the structure
// checksum; files without checksums still load, and verification of them is refused.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "encrt_generated.h"
#include "support/fixtures.h"

namespace encrt {
namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

// A 64-byte-aligned copy of `bytes`, as Model::from_buffer needs.
struct AlignedBuffer {
  explicit AlignedBuffer(const std::string& bytes) : size(bytes.size()) {
    data = static_cast<unsigned char*>(std::aligned_alloc(64, (size + 63) / 64 * 64));
    std::memcpy(data, bytes.data(), size);
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  unsigned char* data;
  size_t size;
};

// One part of a tensor's payload: where it lies in the file.
struct Part {
  std::string tensor;
  const char* field;
  size_t offset = 0;
  size_t bytes = 0;
};

template <typename T>
void add_part(std::vector<Part>* parts, const unsigned char* base, const std::string& tensor, const char* field,
              const flatbuffers::Vector<T>* v) {
  if (!v || v->size() == 0) return;
  parts->push_back({tensor, field, static_cast<size_t>(reinterpret_cast<const unsigned char*>(v->data()) - base),
                    v->size() * sizeof(T)});
}

// Every payload part of every tensor in the file.
std::vector<Part> payload_parts(const AlignedBuffer& file) {
  std::vector<Part> parts;
  const fb::Model* root = fb::GetModel(file.data);
  REQUIRE(root->tensors() != nullptr);
  for (const fb::Tensor* t : *root->tensors()) {
    const std::string name = t->name()->str();
    add_part(&parts, file.data, name, "data", t->data());
    add_part(&parts, file.data, name, "scales", t->scales());
    add_part(&parts, file.data, name, "column_sums", t->column_sums());
    add_part(&parts, file.data, name, "activation_multipliers", t->activation_multipliers());
  }
  return parts;
}

// Clears a field's entry in a table's vtable: the field then reads as absent, as in a file written
// before it existed. (Tables may share a vtable; the converter writes the same fields for all.)
void clear_vtable_entry(unsigned char* base, const unsigned char* table, flatbuffers::voffset_t field) {
  const flatbuffers::soffset_t to_vtable = flatbuffers::ReadScalar<flatbuffers::soffset_t>(table);
  unsigned char* vtable = base + (table - base) - to_vtable;
  if (field < flatbuffers::ReadScalar<flatbuffers::voffset_t>(vtable))
    flatbuffers::WriteScalar<flatbuffers::voffset_t>(vtable + field, 0);
}

// The file as a converter before checksums wrote it: every checksum field absent.
std::string without_checksums(const std::string& bytes) {
  AlignedBuffer copy(bytes);
  const fb::Model* root = fb::GetModel(copy.data);
  for (const fb::Tensor* t : *root->tensors())
    clear_vtable_entry(copy.data, reinterpret_cast<const unsigned char*>(t), fb::Tensor::VT_CHECKSUM);
  clear_vtable_entry(copy.data, reinterpret_cast<const unsigned char*>(root), fb::Model::VT_STRUCTURE_CHECKSUM);
  return std::string(reinterpret_cast<const char*>(copy.data), copy.size);
}

Status load_bytes(const std::string& bytes, bool verify) {
  AlignedBuffer copy(bytes);
  std::unique_ptr<Model> model;
  LoadOptions options;
  options.verify_checksums = verify;
  return Model::from_buffer(copy.data, copy.size, options, &model);
}

ChecksumReport verify_bytes(const std::string& bytes) {
  AlignedBuffer copy(bytes);
  ChecksumReport report;
  const Status s = Model::verify_buffer(copy.data, copy.size, &report);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  return report;
}

std::string convert_checkpoint(const std::string& fixture, converter::WeightType type, const std::string& pooling = "") {
  converter::ConvertOptions opt;
  opt.source_dir = std::string(ENCRT_FIXTURES_DIR) + "/" + fixture;
  opt.weight_type = type;
  opt.pooling = pooling;
  opt.calibration_threads = 1;
  std::string name = fixture;
  for (char& c : name)
    if (c == '/') c = '_';
  opt.output_path = test::tmp_path("checksums_" + name + "." + converter::weight_type_name(type) +
                                   (pooling.empty() ? "" : "." + pooling) + ".encrt");
  const Status s = converter::convert(opt);
  INFO(s.to_string());
  REQUIRE(s.is_ok());
  return opt.output_path;
}

// The fixtures of this test: every dtype and layout, int8 scales, column sums and activation
// multipliers (the int8 converter smooths), a pooler, and both kinds of head classifier.
std::vector<std::string> models() {
  return {convert_checkpoint("bert_plain", converter::WeightType::kF32, "pooler"),
          convert_checkpoint("bert_plain", converter::WeightType::kI8, "pooler"),
          convert_checkpoint("heads/bert_seq_single", converter::WeightType::kF32),
          convert_checkpoint("heads/bert_token", converter::WeightType::kI8)};
}

}  // namespace

TEST_CASE("a converted file carries a checksum for every tensor and its structure, and they match", "[checksums]") {
  for (const std::string& path : models()) {
    INFO(path);
    ChecksumReport report;
    REQUIRE(Model::verify_file(path, &report).is_ok());
    CHECK(report.ok());
    CHECK(report.structure_checked);
    CHECK(report.tensors > 0);
    CHECK(report.tensors_checked == report.tensors);
    CHECK(report.unchecked.empty());
    CHECK(report.mismatches.empty());
    // The two kinds of checksum cover every byte of the file exactly once (the structure
    // checksum's own 8 bytes aside).
    const std::string bytes = read_bytes(path);
    CHECK(report.bytes_checked == bytes.size() - 8);

    std::unique_ptr<Model> model;
    LoadOptions options;
    options.verify_checksums = true;
    const Status s = Model::load(path, options, &model);
    INFO(s.to_string());
    CHECK(s.is_ok());
  }
}

TEST_CASE("the verified and the plain load give the same model", "[checksums]") {
  const test::Fixture f = test::load_fixture("bert_plain");
  const std::string path = convert_checkpoint("bert_plain", converter::WeightType::kF32, "pooler");
  std::unique_ptr<Model> plain, verified;
  REQUIRE(Model::load(path, &plain).is_ok());
  LoadOptions options;
  options.verify_checksums = true;
  REQUIRE(Model::load(path, options, &verified).is_ok());
  SessionOptions so;
  so.max_batch = f.batch;
  so.max_seq = f.seq;
  const auto a = test::run_fixture(*plain, f, so);
  const auto b = test::run_fixture(*verified, f, so);
  OutputInfo ha, hb;
  REQUIRE(a->output("hidden", &ha).is_ok());
  REQUIRE(b->output("hidden", &hb).is_ok());
  REQUIRE(ha.bytes == hb.bytes);
  CHECK(std::memcmp(ha.data, hb.data, ha.bytes) == 0);
}

TEST_CASE("one flipped byte in any part of any tensor is caught and names the tensor", "[checksums]") {
  for (const std::string& path : models()) {
    const std::string bytes = read_bytes(path);
    AlignedBuffer original(bytes);
    const std::vector<Part> parts = payload_parts(original);
    size_t checked = 0, int8_parts = 0;
    for (const Part& p : parts) {
      INFO(path << ": tensor '" << p.tensor << "', " << p.field << " (" << p.bytes << " bytes)");
      std::string corrupt = bytes;
      corrupt[p.offset + p.bytes / 2] ^= 0x5a;

      const ChecksumReport report = verify_bytes(corrupt);
      CHECK_FALSE(report.ok());
      REQUIRE(report.mismatches.size() == 1);  // that tensor alone; the structure still matches
      CHECK(report.mismatches[0].tensor == p.tensor);
      CHECK(report.mismatches[0].stored != report.mismatches[0].computed);

      const Status s = load_bytes(corrupt, true);
      CHECK(s.code() == StatusCode::kInvalidModel);
      CHECK(s.message().find("tensor '" + p.tensor + "' does not match its checksum") != std::string::npos);
      ++checked;
      if (std::strcmp(p.field, "data") != 0) ++int8_parts;
    }
    CHECK(checked == parts.size());
    if (path.find(".int8.") != std::string::npos) CHECK(int8_parts > 0);
  }
}

TEST_CASE("every payload kind is exercised by the flipped-byte test", "[checksums]") {
  // The flipped-byte test means what it says only if the fixtures hold each kind of part.
  bool kinds[4] = {false, false, false, false};
  bool head = false, pooler = false;
  for (const std::string& path : models()) {
    AlignedBuffer file(read_bytes(path));
    for (const Part& p : payload_parts(file)) {
      const char* names[4] = {"data", "scales", "column_sums", "activation_multipliers"};
      for (int i = 0; i < 4; ++i)
        if (std::strcmp(p.field, names[i]) == 0) kinds[i] = true;
      head = head || p.tensor == "head.classifier.weight";
      pooler = pooler || p.tensor == "pooler.weight";
    }
  }
  CHECK(kinds[0]);
  CHECK(kinds[1]);
  CHECK(kinds[2]);
  CHECK(kinds[3]);
  CHECK(head);
  CHECK(pooler);
}

TEST_CASE("a flipped byte in the file through Model::load and verify_file", "[checksums]") {
  const std::string path = convert_checkpoint("bert_plain", converter::WeightType::kI8, "pooler");
  const std::string bytes = read_bytes(path);
  AlignedBuffer original(bytes);
  const fb::Tensor* t = fb::GetModel(original.data)->tensors()->LookupByKey("layers.1.ffn.down.weight");
  REQUIRE(t != nullptr);
  const size_t at = static_cast<size_t>(t->data()->data() - original.data) + t->data()->size() / 2;
  std::string corrupt = bytes;
  corrupt[at] ^= 0x01;
  const std::string corrupt_path = test::tmp_path("checksums_flipped.encrt");
  write_bytes(corrupt_path, corrupt);

  ChecksumReport report;
  REQUIRE(Model::verify_file(corrupt_path, &report).is_ok());
  REQUIRE(report.mismatches.size() == 1);
  CHECK(report.mismatches[0].tensor == "layers.1.ffn.down.weight");
  CHECK(report.mismatches[0].bytes > t->data()->size());  // the scales, column sums and multipliers too

  std::unique_ptr<Model> model;
  LoadOptions options;
  options.verify_checksums = true;
  const Status s = Model::load(corrupt_path, options, &model);
  CHECK(s.code() == StatusCode::kInvalidModel);
  CHECK(s.message().find("layers.1.ffn.down.weight") != std::string::npos);
  CHECK(s.message().find(corrupt_path) != std::string::npos);
  CHECK(model == nullptr);
  // Without the option the loader's own column-sum check happens to catch this one (an int8
  // weight), naming a column rather than the damage.
  const Status plain = Model::load(corrupt_path, &model);
  CHECK(plain.code() == StatusCode::kInvalidModel);
  CHECK(plain.message().find("column sum") != std::string::npos);
}

TEST_CASE("a flip outside the tensors' payloads is caught by the structure checksum", "[checksums]") {
  // A vocabulary: a corrupted token would tokenize text silently wrong.
  const std::string path = test::bert_plain_with_vocab("checksums_vocab", {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello",
                                                                           "world", "##s"});
  const std::string bytes = read_bytes(path);
  AlignedBuffer original(bytes);
  const fb::Model* root = fb::GetModel(original.data);
  REQUIRE(root->vocabulary() != nullptr);
  const flatbuffers::String* token = root->vocabulary()->tokens()->Get(4);
  REQUIRE(token->str() == "hello");
  std::string corrupt = bytes;
  corrupt[static_cast<size_t>(reinterpret_cast<const unsigned char*>(token->c_str()) - original.data)] = 'j';

  // Without verification the file loads, with a wrong token.
  {
    AlignedBuffer copy(corrupt);
    std::unique_ptr<Model> model;
    REQUIRE(Model::from_buffer(copy.data, copy.size, &model).is_ok());
    CHECK(model->vocabulary()[4] == "jello");
  }
  const ChecksumReport report = verify_bytes(corrupt);
  REQUIRE(report.mismatches.size() == 1);
  CHECK(report.mismatches[0].tensor.empty());
  CHECK_FALSE(report.ok());
  const Status s = load_bytes(corrupt, true);
  CHECK(s.code() == StatusCode::kInvalidModel);
  CHECK(s.message().find("structure") != std::string::npos);

  // A config value that stays valid when damaged: BERT's LayerNorm after the embeddings is
  // switched off (its tensors are then simply not used).
  REQUIRE(root->config()->embedding_norm());
  const auto* field =
      reinterpret_cast<const flatbuffers::Table*>(root->config())->GetAddressOf(fb::Config::VT_EMBEDDING_NORM);
  REQUIRE(field != nullptr);
  corrupt = bytes;
  corrupt[static_cast<size_t>(field - original.data)] ^= 0x01;
  CHECK(load_bytes(corrupt, false).is_ok());
  CHECK(load_bytes(corrupt, true).code() == StatusCode::kInvalidModel);

  // And appended bytes (a download that did not stop where it should).
  CHECK(load_bytes(bytes + std::string(64, '\0'), false).is_ok());
  CHECK(load_bytes(bytes + std::string(64, '\0'), true).code() == StatusCode::kInvalidModel);
}

TEST_CASE("a file without checksums loads, and verifying it is refused", "[checksums]") {
  const std::string path = convert_checkpoint("bert_plain", converter::WeightType::kF32, "pooler");
  const std::string old = without_checksums(read_bytes(path));
  CHECK(load_bytes(old, false).is_ok());

  const ChecksumReport report = verify_bytes(old);
  CHECK_FALSE(report.has_checksums());
  CHECK_FALSE(report.ok());
  CHECK(report.tensors_checked == 0);
  CHECK(report.unchecked.size() == report.tensors);

  const Status s = load_bytes(old, true);
  CHECK(s.code() == StatusCode::kInvalidModel);
  CHECK(s.message().find("no checksums") != std::string::npos);
}

TEST_CASE("verify_file and verify_buffer refuse what is not a model", "[checksums]") {
  ChecksumReport report;
  CHECK(Model::verify_file(test::tmp_path("checksums-missing.encrt"), &report).code() == StatusCode::kIoError);
  CHECK(Model::verify_file("", nullptr).code() == StatusCode::kInvalidArgument);
  const std::string text(256, 'x');
  AlignedBuffer copy(text);
  CHECK(Model::verify_buffer(copy.data, copy.size, &report).code() == StatusCode::kInvalidModel);
  CHECK(Model::verify_buffer(nullptr, 16, &report).code() == StatusCode::kInvalidArgument);
  CHECK(Model::verify_buffer(copy.data, 0, &report).code() == StatusCode::kInvalidArgument);
  CHECK(Model::verify_buffer(copy.data + 1, 16, &report).code() == StatusCode::kInvalidArgument);
}

}  // namespace encrt
