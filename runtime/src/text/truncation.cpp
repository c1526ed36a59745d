#include "text/truncation.h"

#include <algorithm>
#include <string>

namespace encrt::text {

Status truncated_lengths(size_t first, size_t second, bool has_second, size_t budget, Truncation strategy,
                         size_t* keep_first, size_t* keep_second) {
  *keep_first = first;
  *keep_second = second;
  if (!has_second && strategy == Truncation::kOnlySecond)
    return invalid_argument("truncation only_second needs a pair of texts (there is no second text to cut)");
  if (first + second <= budget) return Status::ok();
  // A budget of nothing empties both texts whatever the strategy, as Hugging Face does.
  if (budget == 0) {
    *keep_first = *keep_second = 0;
    return Status::ok();
  }
  const size_t excess = first + second - budget;
  switch (strategy) {
    case Truncation::kLongestFirst: {
      if (!has_second) {
        *keep_first = budget;
        return Status::ok();
      }
      // Hugging Face's rule for pairs: n1 is the shorter text (the first when they tie), n2 the
      // longer one. The shorter keeps what it has when that leaves the longer at least as much;
      // otherwise the budget is split in halves with the odd token to n2.
      const bool swap = first > second;
      size_t n1 = swap ? second : first;
      size_t n2 = n1 > budget ? n1 : std::max(n1, budget - n1);
      if (n1 + n2 > budget) {
        n1 = budget / 2;
        n2 = n1 + budget % 2;
      }
      if (swap) std::swap(n1, n2);
      *keep_first = std::min(first, n1);
      *keep_second = std::min(second, n2);
      return Status::ok();
    }
    case Truncation::kOnlyFirst:
    case Truncation::kOnlySecond: {
      const bool cut_first = strategy == Truncation::kOnlyFirst;
      const size_t have = cut_first ? first : second;
      if (have <= excess)
        return invalid_argument(std::string("truncation ") + truncation_name(strategy) + ": the " +
                                (cut_first ? "first" : "second") + " text has " + std::to_string(have) +
                                " tokens, and " + std::to_string(excess) +
                                " must go to fit max_length (Hugging Face: sequence to truncate too short); "
                                "use longest_first or a larger max_length");
      (cut_first ? *keep_first : *keep_second) = have - excess;
      return Status::ok();
    }
  }
  return invalid_argument("unknown truncation strategy " + std::to_string(static_cast<int>(strategy)));
}

}  // namespace encrt::text
