// One op (or a short chain) as a graph of its own, with its weights and input data, and the
// harness that runs it through one backend in guarded buffers of that backend's memory.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "model/model_impl.h"
#include "plan/graph.h"

namespace encrt::conformance {

struct OpProblem {
  std::string name;
  plan::Graph graph;
  backend::Shape max;  // what the buffers are sized for
  backend::Shape run;  // the shape of the run (a prefix of each buffer)
  std::vector<std::vector<unsigned char>> input;  // per buffer: bytes written before the run
  std::vector<bool> absent;                       // per buffer: bound to null (an absent input)
  std::vector<size_t> used;                       // per buffer: the bytes the run may write
  bool nonfinite = false;                         // inputs hold NaN and ±Inf
  bool src_mask_per_sequence = false;             // the src mask inputs are [batch, seq, seq]
  // Weights and tables the op params point at (stable addresses).
  std::deque<std::vector<float>> f32;
  std::deque<std::vector<uint16_t>> f16;
  std::deque<std::vector<int8_t>> i8;
  std::deque<std::vector<int32_t>> i32;
  std::deque<detail::LinearView> linears;
  std::deque<detail::TableView> tables;
  std::deque<detail::NormView> norms;

  OpProblem() = default;
  OpProblem(const OpProblem&) = delete;
  OpProblem& operator=(const OpProblem&) = delete;

  int add_buffer(const std::string& name, DType dtype, plan::Rows rows, size_t row_bytes);
  // The op's output buffers (what is compared), in op order.
  std::vector<int> outputs() const;
};

struct ProblemRun {
  bool supported = true;                            // false: the backend does not run some op
  Status status;                                    // create / prepare / run failures
  std::vector<std::string> problems;                // sentinel or input damage
  std::vector<std::vector<unsigned char>> results;  // per buffer of outputs(): its used bytes
};

// Runs `p` on a fresh context of `table` with `options` and `threads`, every buffer in the
// backend's memory.
ProblemRun run_problem(const backend::BackendInterface& table, const backend::Options& options, int threads,
                       const OpProblem& p);

}  // namespace encrt::conformance
