#include "encrt/encrt.hpp"
#include "model/checksums.h"
#include "model/model_impl.h"

namespace encrt {

const char* version() { return "0.1.0"; }

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

Status Model::load(const std::string& path, std::unique_ptr<Model>* out) { return load(path, LoadOptions(), out); }

Status Model::load(const std::string& path, const LoadOptions& options, std::unique_ptr<Model>* out) {
  if (!out) return invalid_argument("Model::load: out is null");
  auto impl = std::make_unique<Impl>();
  impl->file = std::make_unique<MappedFile>();
  if (Status s = impl->file->open(path); !s) return s;
  if (Status s = detail::load_model_buffer(impl->file->data(), impl->file->size(), path, impl.get(), options); !s)
    return s;
  out->reset(new Model(std::move(impl)));
  return Status::ok();
}

Status Model::from_buffer(const void* data, size_t size, std::unique_ptr<Model>* out) {
  return from_buffer(data, size, LoadOptions(), out);
}

namespace {
// The loader reads the weights in place and the file aligns each tensor's data to 64 bytes from
// its start (schema: force_align 64), so the buffer's own start must be 64-byte aligned.
Status check_buffer(const char* who, const void* data, size_t size) {
  if (!data) return invalid_argument(std::string(who) + ": data is null");
  if (size == 0) return invalid_argument(std::string(who) + ": size is 0");
  if (const uintptr_t off = reinterpret_cast<uintptr_t>(data) % 64; off != 0)
    return invalid_argument(std::string(who) + ": data must be 64-byte aligned (it is " + std::to_string(off) +
                            " bytes past a multiple of 64; allocate it with aligned_alloc(64, ...) or posix_memalign)");
  return Status::ok();
}
}  // namespace

Status Model::from_buffer(const void* data, size_t size, const LoadOptions& options, std::unique_ptr<Model>* out) {
  if (!out) return invalid_argument("Model::from_buffer: out is null");
  if (Status s = check_buffer("Model::from_buffer", data, size); !s) return s;
  auto impl = std::make_unique<Impl>();
  if (Status s = detail::load_model_buffer(static_cast<const unsigned char*>(data), size, "<buffer>", impl.get(), options);
      !s)
    return s;
  out->reset(new Model(std::move(impl)));
  return Status::ok();
}

namespace {
Status verify_checksums_of(const unsigned char* data, size_t size, const std::string& origin, ChecksumReport* report) {
  const fb::Model* root = nullptr;
  if (Status s = detail::verify_model_buffer(data, size, origin, &root); !s) return s;
  detail::check_checksums(data, size, root, report);
  return Status::ok();
}
}  // namespace

Status Model::verify_file(const std::string& path, ChecksumReport* report) {
  if (!report) return invalid_argument("Model::verify_file: report is null");
  *report = ChecksumReport();
  MappedFile file;
  if (Status s = file.open(path); !s) return s;
  return verify_checksums_of(file.data(), file.size(), path, report);
}

Status Model::verify_buffer(const void* data, size_t size, ChecksumReport* report) {
  if (!report) return invalid_argument("Model::verify_buffer: report is null");
  *report = ChecksumReport();
  if (Status s = check_buffer("Model::verify_buffer", data, size); !s) return s;
  return verify_checksums_of(static_cast<const unsigned char*>(data), size, "<buffer>", report);
}

const ModelConfig& Model::config() const { return impl_->config; }
size_t Model::file_size() const { return impl_->size; }
const std::vector<std::string>& Model::vocabulary() const { return impl_->vocabulary; }
bool Model::has_head() const { return impl_->head.kind != detail::HeadKind::kNone; }

Status Model::head(HeadInfo* out) const {
  if (!out) return invalid_argument("Model::head: out is null");
  if (!has_head())
    return unsupported("this model has no task head (it gives hidden and pooled outputs); convert a checkpoint with a "
                       "classifier (BertForSequenceClassification, BertForTokenClassification, a torch_encoder with "
                       "classifier or tag_classifier) to get one");
  *out = impl_->head_info;
  return Status::ok();
}

std::vector<TensorInfo> Model::tensors() const {
  std::vector<TensorInfo> out;
  const auto* tensors = impl_->root->tensors();
  if (!tensors) return out;
  for (const fb::Tensor* t : *tensors) {
    TensorInfo info;
    info.name = t->name()->str();
    if (t->shape())
      for (int64_t d : *t->shape()) info.shape.push_back(d);
    switch (t->dtype()) {
      case fb::DType::F32: info.dtype = dtype_name(DType::kF32); break;
      case fb::DType::F16: info.dtype = dtype_name(DType::kF16); break;
      case fb::DType::I8: info.dtype = dtype_name(DType::kI8); break;
      case fb::DType::I32: info.dtype = dtype_name(DType::kI32); break;
      default: info.dtype = "unknown"; break;
    }
    switch (t->layout()) {
      case fb::Layout::RowMajor: info.layout = "row_major"; break;
      case fb::Layout::PanelN16: info.layout = "panel_n16"; break;
      case fb::Layout::PanelN16K4: info.layout = "panel_n16k4"; break;
      default: info.layout = "unknown"; break;
    }
    info.bytes = t->data() ? t->data()->size() : 0;
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> Model::metadata() const {
  std::vector<std::pair<std::string, std::string>> out;
  if (const auto* md = impl_->root->metadata())
    for (const fb::KeyValue* kv : *md) out.emplace_back(kv->key()->str(), kv->value() ? kv->value()->str() : "");
  return out;
}

std::string Model::metadata_value(const std::string& key) const {
  if (const auto* md = impl_->root->metadata())
    for (const fb::KeyValue* kv : *md)
      if (kv->key()->str() == key) return kv->value() ? kv->value()->str() : "";
  return "";
}

}  // namespace encrt
