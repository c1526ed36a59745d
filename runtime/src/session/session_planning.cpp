#include <algorithm>

#include "session/session_impl.h"

namespace encrt::detail {

Status plan_session(const ModelImpl& model, const SessionOptions& options, const kernels::KernelTable& kernels,
                    SessionImpl* impl) {
  plan::GraphOptions g;
  g.max_batch = options.max_batch;
  g.max_seq = options.max_seq;
  g.threads = options.threads;
  g.attention_layer = options.attention_layer;
  g.attention_f32_scratch = kernels.attention_f32_scratch;
  g.attention_i8_scratch = kernels.attention_i8_scratch;
  impl->graph = plan::build_encoder_graph(model, g);

  const std::vector<plan::Lifetime> life = plan::buffer_lifetimes(impl->graph);
  std::vector<plan::BufferLifetime> requests;
  requests.reserve(life.size());
  impl->intermediates_total = 0;
  for (size_t i = 0; i < life.size(); ++i) {
    if (life[i].first_op < 0) return internal_error("planned buffer '" + impl->graph.buffers[i].name + "' is never used");
    requests.push_back({impl->graph.buffers[i].max_bytes, life[i].first_op, life[i].last_op});
    impl->intermediates_total += impl->graph.buffers[i].max_bytes;
  }
  impl->arena_plan = plan::plan_arena(requests);
  impl->planned.clear();
  for (size_t i = 0; i < life.size(); ++i)
    impl->planned.push_back({impl->graph.buffers[i].name, impl->arena_plan.offsets[i], impl->graph.buffers[i].max_bytes,
                             life[i].first_op, life[i].last_op});
  return Status::ok();
}

}  // namespace encrt::detail
