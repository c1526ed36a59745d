#include "backend/op_problem.h"

#include <algorithm>
#include <cstring>

#include "backend/guarded_buffers.h"
#include "core/half.h"

namespace encrt::conformance {

int OpProblem::add_buffer(const std::string& name, DType dtype, plan::Rows rows, size_t row_bytes) {
  plan::BufferSpec b;
  b.name = name;
  b.dtype = dtype;
  b.rows = rows;
  b.row_bytes = row_bytes;
  b.max_bytes = row_bytes * plan::max_rows(rows, max.batch, max.seq);
  const int id = graph.add_buffer(std::move(b));
  input.emplace_back();
  absent.push_back(false);
  used.push_back(plan::bytes_of(graph.buffers.back(), run.batch, run.seq));
  return id;
}

std::vector<int> OpProblem::outputs() const {
  std::vector<int> out;
  for (const plan::Op& op : graph.ops)
    for (int b : op.outputs)
      if (b >= 0 && std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
  return out;
}

namespace {

std::vector<unsigned char> to_half(const std::vector<unsigned char>& f32) {
  std::vector<unsigned char> out(f32.size() / 2);
  for (size_t i = 0; i < f32.size() / 4; ++i) {
    float v;
    std::memcpy(&v, f32.data() + 4 * i, 4);
    const uint16_t h = float_to_half(v);
    std::memcpy(out.data() + 2 * i, &h, 2);
  }
  return out;
}

std::vector<unsigned char> to_float(const std::vector<unsigned char>& f16) {
  std::vector<unsigned char> out(f16.size() * 2);
  for (size_t i = 0; i < f16.size() / 2; ++i) {
    uint16_t h;
    std::memcpy(&h, f16.data() + 2 * i, 2);
    const float v = half_to_float(h);
    std::memcpy(out.data() + 4 * i, &v, 4);
  }
  return out;
}

// uint8 quantized rows <-> a backend's int8 storage of them (q - 128: the top bit flipped), the
// cuda backend's form for cuBLASLt's int8 GEMMs.
std::vector<unsigned char> flip_sign_bits(std::vector<unsigned char> bytes) {
  for (unsigned char& b : bytes) b = static_cast<unsigned char>(b ^ 0x80u);
  return bytes;
}

struct Context {
  const backend::BackendInterface& table;
  void* context = nullptr;
  explicit Context(const backend::BackendInterface& t) : table(t) {}
  ~Context() {
    if (context) table.destroy(context);
  }
};

}  // namespace

ProblemRun run_problem(const backend::BackendInterface& table, const backend::Options& options, int threads,
                       const OpProblem& p) {
  ProblemRun r;
  plan::Graph g = p.graph;
  const int memory = table.memory == backend::MemoryKind::kHost ? plan::kHostMemory : 1;
  for (plan::BufferSpec& b : g.buffers) b.memory = memory;
  Context c(table);
  if (Status s = table.create(options, threads, &c.context); !s) {
    r.status = s;
    return r;
  }
  for (const plan::Op& op : g.ops)
    if (!table.supports(c.context, g, op)) {
      r.supported = false;
      return r;
    }
  std::vector<size_t> used = p.used;
  // A backend that stores activations in another type (fp16 on a GPU) gets them converted on the
  // way in and out; the comparison is always of fp32 values.
  std::vector<std::vector<unsigned char>> input = p.input;
  if (table.storage_dtype) {
    for (size_t b = 0; b < g.buffers.size(); ++b) {
      plan::BufferSpec& spec = g.buffers[b];
      const DType d = table.storage_dtype(c.context, g, static_cast<int>(b));
      if (d == spec.dtype) continue;
      if (spec.dtype == DType::kU8 && d == DType::kI8) {
        spec.dtype = d;
        input[b] = flip_sign_bits(input[b]);
        continue;
      }
      if (spec.dtype != DType::kF32 || d != DType::kF16) {
        r.status = internal_error("conformance: the harness converts only f32 buffers to f16 and u8 to i8");
        return r;
      }
      spec.row_bytes /= 2, spec.max_bytes /= 2, used[b] /= 2, spec.dtype = d;
      input[b] = to_half(input[b]);
    }
  }
  for (plan::Op& op : g.ops) {
    const size_t bytes = table.scratch_bytes(c.context, g, op, p.max);
    if (bytes == 0) continue;
    plan::BufferSpec s;
    s.name = op.label + ".scratch";
    s.dtype = DType::kU8;
    s.rows = plan::Rows::kFixed;
    s.row_bytes = s.max_bytes = bytes;
    s.memory = memory;
    op.scratch = g.add_buffer(std::move(s));
    used.push_back(bytes);  // the op may use all of its scratch
  }
  for (const plan::Op& op : g.ops) {
    for (int b : op.inputs)
      if (b >= 0) g.buffers[static_cast<size_t>(b)].pad_bytes = table.read_overrun;
    if (op.scratch >= 0) g.buffers[static_cast<size_t>(op.scratch)].pad_bytes = table.read_overrun;
  }
  std::vector<int> ops(g.ops.size());
  for (size_t i = 0; i < ops.size(); ++i) ops[i] = static_cast<int>(i);
  backend::PrepareArgs prep;
  prep.graph = &g;
  prep.ops = ops.data();
  prep.op_count = static_cast<int>(ops.size());
  prep.max = p.max;
  backend::HeldBytes held;
  if (Status s = table.prepare(c.context, prep, &held); !s) {
    r.status = s;
    return r;
  }

  std::vector<MemoryOwner> owners = {MemoryOwner{}};
  if (memory != plan::kHostMemory) owners.push_back({&table, c.context});
  GuardedBuffers buffers(g, owners);
  if (!buffers.status().is_ok()) {
    r.status = buffers.status();
    return r;
  }
  for (size_t b = 0; b < input.size(); ++b) {
    if (p.absent[b]) buffers.unbind(static_cast<int>(b));
    if (!input[b].empty())
      if (Status s = buffers.write(static_cast<int>(b), input[b].data(), input[b].size()); !s) {
        r.status = s;
        return r;
      }
  }
  backend::RunArgs args;
  args.graph = &g;
  args.ops = ops.data();
  args.op_count = static_cast<int>(ops.size());
  args.buffers = buffers.bindings();
  args.shape = p.run;
  args.src_mask_per_sequence = p.src_mask_per_sequence;
  r.status = table.run(c.context, args);
  if (r.status.is_ok() && table.synchronize) r.status = table.synchronize(c.context);
  if (!r.status.is_ok()) return r;

  const std::vector<int> outs = p.outputs();
  for (size_t b = 0; b < g.buffers.size(); ++b) {
    const bool written = std::find(outs.begin(), outs.end(), static_cast<int>(b)) != outs.end() ||
                         (b >= p.graph.buffers.size());  // scratch
    const size_t untouched_from = written                  ? used[b]
                                  : b < input.size() && !input[b].empty() ? input[b].size()
                                                                            : buffers.size(static_cast<int>(b));
    const std::string problem = buffers.check(static_cast<int>(b), untouched_from);
    if (!problem.empty()) r.problems.push_back(problem);
    if (!written && b < input.size() && !input[b].empty()) {  // inputs must come back unchanged
      std::vector<unsigned char> back(input[b].size());
      if (buffers.read(static_cast<int>(b), back.data(), back.size()).is_ok() && back != input[b])
        r.problems.push_back("input buffer '" + g.buffers[b].name + "' was modified");
    }
  }
  for (int b : outs) {
    std::vector<unsigned char> bytes(used[static_cast<size_t>(b)]);
    if (Status s = buffers.read(b, bytes.data(), bytes.size()); !s) r.status = s;
    const DType stored = g.buffers[static_cast<size_t>(b)].dtype, planned = p.graph.buffers[static_cast<size_t>(b)].dtype;
    r.results.push_back(stored == planned                                       ? std::move(bytes)
                        : planned == DType::kU8 && stored == DType::kI8 ? flip_sign_bits(std::move(bytes))
                                                                        : to_float(bytes));
  }
  return r;
}

}  // namespace encrt::conformance
