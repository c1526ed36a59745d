// The cases the tensor-core attention tests (test_attention_mma_emulated.cpp,
// test_attention_i8_mma_emulated.cpp) run their kernels on: a shape and a layout, and the masks
// they use.
#pragma once

#include <sstream>
#include <string>

namespace encrt::emulation {

struct AttentionCase {
  int head_dim = 32, batch = 1, seq = 1, heads = 1;
  bool masked = false, packed = false;
  std::string describe() const {
    std::ostringstream s;
    s << "head_dim " << head_dim << " batch " << batch << " seq " << seq << " heads " << heads << (masked ? " masked" : "")
      << (packed ? " packed" : "");
    return s.str();
  }
};

// Sequence b's mask: 0 real but every fifth token, 1 real only in its second half and with
// holes, 2 no real token.
inline bool real_token(int b, int t, int seq) {
  return b % 3 == 0 ? t % 5 != 3 : b % 3 == 1 ? t >= seq / 2 && t % 3 != 1 : false;
}

}  // namespace encrt::emulation
