// encrt inspect MODEL [--batch B] [--seq S] [--threads T] [--backend B] [--buffers]: config,
// tensors, metadata, which backend runs each op, what each backend holds, the arena plans.
#include <cstdio>

#include "cli/args.h"
#include "cli/backend_args.h"
#include "cli/commands.h"
#include "encrt/encrt.hpp"

namespace encrt::cli {

namespace {
int fail(const Status& s) {
  std::fprintf(stderr, "encrt inspect: %s\n", s.to_string().c_str());
  return 1;
}
double mib(size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }
}  // namespace

int cmd_inspect(int argc, char** argv) {
  Args args({"batch", "seq", "threads", "backend", "isa", "backend-options"}, {"help", "buffers", "no-graphs"});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  if (args.has("help") || args.positional().size() != 1) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt inspect MODEL [--batch B] [--seq S] [--threads T] [--buffers]\n"
                 "                     %s\n",
                 kBackendUsage);
    return args.has("help") ? 0 : 2;
  }
  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  const ModelConfig& c = model->config();
  SessionOptions opt;
  if (Status s = args.get_int("batch", 1, &opt.max_batch); !s) return fail(s);
  if (Status s = args.get_int("seq", std::min(128, c.max_seq_len), &opt.max_seq); !s) return fail(s);
  if (Status s = args.get_int("threads", 1, &opt.threads); !s) return fail(s);
  if (Status s = apply_backend_args(args, &opt); !s) return fail(s);

  std::printf("model: %s (%.2f MiB)\n", args.positional()[0].c_str(), mib(model->file_size()));
  std::printf("config:\n");
  std::printf("  architecture         %s\n", c.architecture.c_str());
  std::printf("  vocab_size           %d\n", c.vocab_size);
  std::printf("  hidden_size          %d\n", c.hidden_size);
  std::printf("  num_heads            %d (head_dim %d)\n", c.num_heads, c.head_dim());
  std::printf("  num_layers           %d\n", c.num_layers);
  std::printf("  ffn_size             %d\n", c.ffn_size);
  std::printf("  activation           %s\n", c.activation.c_str());
  std::printf("  norm                 %s\n", c.pre_norm ? "pre-norm" : "post-norm");
  std::printf("  layer_norm_eps       %g\n", static_cast<double>(c.layer_norm_eps));
  std::printf("  positional_encoding  %s\n", c.positional_encoding.c_str());
  std::printf("  embedding_scale      %g\n", static_cast<double>(c.embedding_scale));
  std::printf("  max_seq_len          %d\n", c.max_seq_len);
  std::printf("  type_vocab_size      %d\n", c.type_vocab_size);
  std::printf("  embedding_norm       %s\n", c.embedding_norm ? "yes" : "no");
  std::printf("  final_norm           %s\n", c.final_norm ? "yes" : "no");
  std::printf("  pooling              %s%s\n", c.pooling.c_str(), c.normalize ? " + L2 normalize" : "");
  if (HeadInfo h; model->has_head() && model->head(&h)) {
    std::string labels;
    for (const std::string& l : h.labels) labels += (labels.empty() ? "" : ", ") + l;
    std::printf("  head                 %s (%s, scores %s%s): %d labels: %s\n", h.kind.c_str(), h.problem_type.c_str(),
                h.score_function.c_str(), h.kind == "sequence_classification" ? (", on " + h.pooling + " pooling").c_str() : "",
                h.num_labels(), labels.c_str());
  }
  std::printf("  attention_precision  %s\n", c.attention_precision.c_str());
  std::printf("  attention_window     %s\n", c.attention_window > 0 ? std::to_string(c.attention_window).c_str() : "0 (full)");
  std::printf("vocabulary: %zu tokens\n", model->vocabulary().size());
  std::printf("metadata:\n");
  for (const auto& [k, v] : model->metadata()) std::printf("  %-20s %s\n", k.c_str(), v.c_str());
  const auto tensors = model->tensors();
  size_t total = 0;
  std::printf("tensors: %zu\n", tensors.size());
  for (const TensorInfo& t : tensors) {
    std::string shape = "[";
    for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(t.shape[i]);
    shape += "]";
    std::printf("  %-36s %-14s %-4s %-12s %10zu bytes\n", t.name.c_str(), shape.c_str(), t.dtype.c_str(),
                t.layout.c_str(), t.bytes);
    total += t.bytes;
  }
  std::printf("tensor data: %.2f MiB\n", mib(total));

  std::printf("backends of this library:\n");
  for (const BackendStatus& b : available_backends())
    std::printf("  %-8s %s: %s\n", b.name.c_str(),
                b.available ? "available" : b.built ? "not available here" : "not built", b.detail.c_str());
  std::unique_ptr<Session> session;
  if (Status s = Session::create(*model, opt, &session); !s) return fail(s);
  std::printf("session for batch %d, seq %d, %d thread(s), backend %s\n", opt.max_batch, opt.max_seq, opt.threads,
              opt.backend.c_str());
  std::printf("placement (op, kind, backend, implementation):\n");
  for (const OpPlacement& p : session->placement())
    std::printf("  %-36s %-11s %-8s %s\n", p.label.c_str(), p.kind.c_str(), p.backend.c_str(), p.implementation.c_str());
  std::printf("backends (weights read in place / copied / repacked, arena of its memory):\n");
  for (const BackendUsage& b : session->backends())
    std::printf("  %-8s %-6s weights %.2f / %.2f / %.2f MiB, arena %zu bytes (%.2f MiB)\n    %s\n", b.name.c_str(),
                b.memory.c_str(), mib(b.weights_in_place), mib(b.weights_copied), mib(b.weights_packed), b.arena,
                mib(b.arena), b.summary.c_str());
  std::printf("host arena: %zu bytes (%.2f MiB); %zu intermediates totalling %.2f MiB\n", session->arena_bytes(),
              mib(session->arena_bytes()), session->planned_buffers().size(), mib(session->intermediates_total_bytes()));
  std::printf("kernels: %s\n", session->kernel_summary().c_str());
  if (args.has("buffers")) {
    std::printf("planned buffers (memory, offset, size, ops alive):\n");
    for (const PlannedBuffer& b : session->planned_buffers())
      std::printf("  %-40s %-6s %10zu %10zu  [%d, %d]\n", b.name.c_str(), b.memory.c_str(), b.offset, b.size, b.first_op,
                  b.last_op);
  }
  return 0;
}

}  // namespace encrt::cli
