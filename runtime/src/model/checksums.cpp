#include "model/checksums.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

// Header-only: every XXH function is static inline in this file, so libencrt needs no libxxhash
// at run time and exports nothing of it.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace encrt::detail {

namespace {

// One XXH3-64 stream (seed 0) over consecutive byte ranges.
class Hasher {
 public:
  Hasher() { XXH3_64bits_reset(&state_); }
  void add(const void* data, size_t size) {
    if (size > 0) XXH3_64bits_update(&state_, data, size);
    bytes_ += size;
  }
  uint64_t digest() const { return XXH3_64bits_digest(&state_); }
  size_t bytes() const { return bytes_; }

 private:
  XXH3_state_t state_;
  size_t bytes_ = 0;
};

template <typename T>
void set_range(const flatbuffers::Vector<T>* v, const void** data, size_t* bytes) {
  if (!v) return;
  *data = v->data();
  *bytes = static_cast<size_t>(v->size()) * sizeof(T);
}

// The 8 bytes of Model.structure_checksum in the buffer, or null when the field is absent. The
// generated accessor gives the value only; the field's place comes from the root table's vtable
// (the verifier has checked that it lies inside the buffer, 8-byte aligned).
const uint8_t* structure_checksum_field(const unsigned char* data) {
  const auto* table = flatbuffers::GetRoot<flatbuffers::Table>(data);
  return table->GetAddressOf(fb::Model::VT_STRUCTURE_CHECKSUM);
}

// XXH3-64 of [data, data + size) without the byte ranges in `holes` (the tensors' payloads and the
// checksum field itself), in file order. Overlapping holes (two tensors sharing bytes in a crafted
// file) are merged, so no byte counts twice.
uint64_t hash_outside(const unsigned char* data, size_t size, std::vector<std::pair<size_t, size_t>> holes,
                      size_t* hashed) {
  std::sort(holes.begin(), holes.end());
  Hasher h;
  size_t cursor = 0;
  for (const auto& [begin, end] : holes) {
    if (begin > cursor) h.add(data + cursor, begin - cursor);
    cursor = std::max(cursor, end);
  }
  if (cursor < size) h.add(data + cursor, size - cursor);
  *hashed = h.bytes();
  return h.digest();
}

// Where each tensor's payload lies, as [begin, end) offsets into the buffer.
void add_payload_holes(const unsigned char* data, const fb::Model* root, std::vector<std::pair<size_t, size_t>>* holes) {
  if (!root->tensors()) return;
  for (const fb::Tensor* t : *root->tensors()) {
    const TensorPayload p = tensor_payload(*t);
    const std::pair<const void*, size_t> ranges[] = {{p.data, p.data_bytes},
                                                     {p.scales, p.scales_bytes},
                                                     {p.column_sums, p.column_sums_bytes},
                                                     {p.activation_multipliers, p.activation_multipliers_bytes}};
    for (const auto& [ptr, bytes] : ranges)
      if (ptr && bytes > 0) {
        const size_t begin = static_cast<size_t>(static_cast<const unsigned char*>(ptr) - data);
        holes->emplace_back(begin, begin + bytes);
      }
  }
}

uint64_t structure_checksum(const unsigned char* data, size_t size, const fb::Model* root, const uint8_t* field,
                            size_t* hashed) {
  std::vector<std::pair<size_t, size_t>> holes;
  add_payload_holes(data, root, &holes);
  const size_t at = static_cast<size_t>(field - data);
  holes.emplace_back(at, at + sizeof(uint64_t));
  return hash_outside(data, size, std::move(holes), hashed);
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

uint64_t tensor_payload_checksum(const TensorPayload& p) {
  Hasher h;
  h.add(p.data, p.data_bytes);
  h.add(p.scales, p.scales_bytes);
  h.add(p.column_sums, p.column_sums_bytes);
  h.add(p.activation_multipliers, p.activation_multipliers_bytes);
  return h.digest();
}

TensorPayload tensor_payload(const fb::Tensor& t) {
  TensorPayload p;
  set_range(t.data(), &p.data, &p.data_bytes);
  set_range(t.scales(), &p.scales, &p.scales_bytes);
  set_range(t.column_sums(), &p.column_sums, &p.column_sums_bytes);
  set_range(t.activation_multipliers(), &p.activation_multipliers, &p.activation_multipliers_bytes);
  return p;
}

Status seal_structure_checksum(uint8_t* data, size_t size) {
  const fb::Model* root = fb::GetModel(data);
  const uint8_t* field = structure_checksum_field(data);
  if (!field) return internal_error("the model buffer has no structure_checksum field to fill");
  size_t hashed = 0;
  const uint64_t sum = structure_checksum(data, size, root, field, &hashed);
  const uint64_t little_endian = flatbuffers::EndianScalar(sum);
  std::memcpy(const_cast<uint8_t*>(field), &little_endian, sizeof little_endian);  // `data` need not be 8-aligned
  return Status::ok();
}

void check_checksums(const unsigned char* data, size_t size, const fb::Model* root, ChecksumReport* report) {
  *report = ChecksumReport();
  if (const auto* tensors = root->tensors())
    for (const fb::Tensor* t : *tensors) {
      ++report->tensors;
      const std::string name = t->name() ? t->name()->str() : std::string();
      const flatbuffers::Optional<uint64_t> stored = t->checksum();
      const TensorPayload p = tensor_payload(*t);
      const size_t bytes = p.data_bytes + p.scales_bytes + p.column_sums_bytes + p.activation_multipliers_bytes;
      if (!stored.has_value()) {
        report->unchecked.push_back(name);
        continue;
      }
      ++report->tensors_checked;
      report->bytes_checked += bytes;
      const uint64_t computed = tensor_payload_checksum(p);
      if (computed != *stored) report->mismatches.push_back({name, *stored, computed, bytes});
    }
  if (const uint8_t* field = structure_checksum_field(data)) {
    report->structure_checked = true;
    size_t hashed = 0;
    const uint64_t computed = structure_checksum(data, size, root, field, &hashed);
    report->bytes_checked += hashed;
    const uint64_t stored = flatbuffers::ReadScalar<uint64_t>(field);
    if (computed != stored) report->mismatches.push_back({"", stored, computed, hashed});
  }
}

Status require_checksums(const ChecksumReport& r, const std::string& where) {
  if (!r.has_checksums())
    return invalid_model(where + "the file has no checksums to verify (written by a converter before they were "
                                 "added): load it without verify_checksums, or convert it again");
  for (const ChecksumReport::Mismatch& m : r.mismatches) {
    if (m.tensor.empty()) continue;  // tensors first: they say where the damage is
    return invalid_model(where + "tensor '" + m.tensor + "' does not match its checksum (the file stores " +
                         hex(m.stored) + ", its " + std::to_string(m.bytes) + " bytes hash to " + hex(m.computed) +
                         "): the file is corrupt");
  }
  if (!r.mismatches.empty())
    return invalid_model(where + "the file's structure (config, vocabulary, metadata, head, tensor names and shapes) "
                                 "does not match its checksum (stored " + hex(r.mismatches.back().stored) +
                         ", computed " + hex(r.mismatches.back().computed) + "): the file is corrupt");
  if (!r.unchecked.empty())
    return invalid_model(where + "tensor '" + r.unchecked.front() + "' has no checksum (" +
                         std::to_string(r.unchecked.size()) + " of " + std::to_string(r.tensors) +
                         " tensors have none), so it cannot be verified");
  if (!r.structure_checked)
    return invalid_model(where + "the file has no structure checksum, so its config and vocabulary cannot be verified");
  return Status::ok();
}

}  // namespace encrt::detail
