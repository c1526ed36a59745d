// How many tokens of each text of a pair (or of a single text) are kept under a length budget,
// with Hugging Face's truncation strategies as its fast (Rust) tokenizers apply them. Tokens are
// always cut from the end (truncation_side "right").
#pragma once

#include <cstddef>

#include "encrt/encrt.hpp"
#include "encrt/status.hpp"

namespace encrt::text {

// `first`, `second`: the texts' token counts (second = 0 and has_second = false for one text);
// `budget`: the tokens the texts may keep together (max_length less the special tokens). On
// success *keep_first + *keep_second <= budget.
//   longest_first: if both fit, nothing is cut; if the shorter text fits in half the budget, it
//     is kept whole and the longer one gets the rest; otherwise each gets half, the longer text
//     (the second when they are as long) the odd token.
//   only_first / only_second: only that text is cut; it must keep at least one token (else an
//     error, as Hugging Face's "sequence to truncate too short"), except for a budget of 0, which
//     empties both texts.
Status truncated_lengths(size_t first, size_t second, bool has_second, size_t budget, Truncation strategy,
                         size_t* keep_first, size_t* keep_second);

}  // namespace encrt::text
