// Model integrity: the checksums a .encrt file carries (schema Tensor.checksum and
// Model.structure_checksum) and their verification. The one definition of the format, used by the
// converter to write them and by the loader and `encrt verify` to check them.
//
// A tensor's checksum is XXH3-64 (seed 0) of its payload as stored: the element bytes of data,
// then scales, column_sums and activation_multipliers where present. The structure checksum is
// XXH3-64 of every other byte of the buffer, in file order, skipping its own 8 bytes. Together
// they cover every byte of the file once, so one flipped bit anywhere is caught, and a flip in a
// tensor's payload is reported with that tensor's name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "encrt/encrt.hpp"
#include "encrt_generated.h"

namespace encrt::detail {

// A tensor's payload as the converter holds it before writing (the same bytes the file will hold:
// FlatBuffers stores scalars little-endian, as every platform encrt runs on does in memory).
struct TensorPayload {
  const void* data = nullptr;
  size_t data_bytes = 0;
  const void* scales = nullptr;
  size_t scales_bytes = 0;
  const void* column_sums = nullptr;
  size_t column_sums_bytes = 0;
  const void* activation_multipliers = nullptr;
  size_t activation_multipliers_bytes = 0;
};
uint64_t tensor_payload_checksum(const TensorPayload& payload);

// Where the payload of a verified FlatBuffers tensor lies (absent vectors: null, 0 bytes).
TensorPayload tensor_payload(const fb::Tensor& t);

// After the converter has finished a buffer whose Model carries a structure_checksum (any value,
// as a placeholder), computes the checksum over the finished bytes and writes it in place.
Status seal_structure_checksum(uint8_t* data, size_t size);

// Checks every checksum of a buffer that passed the FlatBuffers verifier (and the loader's
// alignment check), whatever else it holds; fills `report` (every tensor, in file order).
void check_checksums(const unsigned char* data, size_t size, const fb::Model* root, ChecksumReport* report);

// The load option's verdict on a report: ok when every checksum is present and matches, else an
// invalid_model error that says why (no checksums at all, a tensor without one, the first tensor
// that does not match, or the structure), prefixed by `where`.
Status require_checksums(const ChecksumReport& report, const std::string& where);

}  // namespace encrt::detail
