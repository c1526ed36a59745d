// encrt run MODEL --ids IDS.npy [--mask MASK.npy] [--token-type-ids TT.npy] [--src-mask M.npy] -o OUT.npy
//           [--output hidden|pooled|attention|logits|scores|labels] [--attention-layer L] [--threads T]
//           [--backend B] [--isa LEVEL]
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cli/args.h"
#include "cli/backend_args.h"
#include "cli/padding_arg.h"
#include "cli/commands.h"
#include "npy/npy.h"
#include "encrt/encrt.hpp"

namespace encrt::cli {

namespace {

int fail(const Status& s) {
  std::fprintf(stderr, "encrt run: %s\n", s.to_string().c_str());
  return 1;
}

Status read_2d(const std::string& path, const char* what, npy::Int32Array* a, int64_t batch, int64_t seq) {
  if (Status s = npy::read_int32(path, a); !s) return s;
  if (a->shape.size() == 1) a->shape.insert(a->shape.begin(), 1);  // a single sequence
  if (a->shape.size() != 2) return invalid_argument(std::string(what) + " must be a [batch, seq] array: " + path);
  if (batch >= 0 && (a->shape[0] != batch || a->shape[1] != seq))
    return invalid_argument(std::string(what) + " has shape [" + std::to_string(a->shape[0]) + ", " +
                            std::to_string(a->shape[1]) + "], the ids have [" + std::to_string(batch) + ", " +
                            std::to_string(seq) + "]");
  return Status::ok();
}

// A src mask (nn.TransformerEncoder's `mask`): bool or integer 0/1 (1 = may not attend) or
// float (additive), [seq, seq] or [batch, seq, seq].
struct SrcMask {
  std::vector<uint8_t> blocked;
  npy::Float32Array bias;
  SrcMaskShape shape = SrcMaskShape::kSeqSeq;
};

Status read_src_mask(const std::string& path, int64_t batch, int64_t seq, SrcMask* m) {
  std::string descr;
  if (Status s = npy::read_descr(path, &descr); !s) return s;
  std::vector<int64_t> shape;
  if (descr == "<f4" || descr == "<f8") {
    if (Status s = npy::read_float32(path, &m->bias); !s) return s;
    shape = m->bias.shape;
  } else {
    npy::Int32Array a;
    if (Status s = npy::read_int32(path, &a); !s) return s;
    for (size_t i = 0; i < a.data.size(); ++i)
      if (a.data[i] != 0 && a.data[i] != 1)
        return invalid_argument("--src-mask " + path + ": value " + std::to_string(a.data[i]) + " at index " +
                                std::to_string(i) + " is not 0 (may attend) or 1 (may not); float masks are additive");
    m->blocked.assign(a.data.begin(), a.data.end());
    shape = a.shape;
  }
  const bool square = shape.size() >= 2 && shape[shape.size() - 1] == seq && shape[shape.size() - 2] == seq;
  if (shape.size() == 2 && square) {
    m->shape = SrcMaskShape::kSeqSeq;
  } else if (shape.size() == 3 && square && shape[0] == batch) {
    m->shape = SrcMaskShape::kBatchSeqSeq;
  } else {
    std::string dims;
    for (int64_t d : shape) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    return invalid_argument("--src-mask " + path + " has shape [" + dims + "]; with ids [" + std::to_string(batch) +
                            ", " + std::to_string(seq) + "] it must be [" + std::to_string(seq) + ", " +
                            std::to_string(seq) + "] or [" + std::to_string(batch) + ", " + std::to_string(seq) + ", " +
                            std::to_string(seq) + "]");
  }
  return Status::ok();
}

}  // namespace

int cmd_run(int argc, char** argv) {
  Args args({"ids", "mask", "token-type-ids", "src-mask", "output", "out", "attention-layer", "threads", "backend", "isa",
             "backend-options", "padding"},
            {"help", "no-graphs"}, {{"-o", "--out"}});
  if (Status s = args.parse(argc, argv); !s) return fail(s);
  if (args.has("help") || args.positional().size() != 1 || !args.has("ids") || !args.has("out")) {
    std::fprintf(args.has("help") ? stdout : stderr,
                 "usage: encrt run MODEL --ids IDS.npy [--mask MASK.npy] [--token-type-ids TT.npy] [--src-mask M.npy]\n"
                 "                 -o OUT.npy\n"
                 "                 [--output hidden|pooled|attention|logits|scores|labels] [--attention-layer L]\n"
                 "                 [--threads T]\n"
                 "                 %s\n"
                 "                 %s\n"
                 "  IDS/MASK/TT: int32 or int64 .npy arrays [batch, seq] (mask: 1 real token, 0 padding)\n"
                 "  M: the src mask (nn.TransformerEncoder's mask), [seq, seq] or [batch, seq, seq]: bool or 0/1\n"
                 "     (1 = may NOT attend) or float32/64 (added to the scores, -inf = may not attend)\n"
                 "  OUT: float32 .npy: hidden [batch, seq, hidden], pooled [batch, hidden],\n"
                 "       attention [batch, heads, seq, seq] of --attention-layer (default 0); a model with a task\n"
                 "       head: logits and scores [batch, labels] or [batch, seq, labels], labels (int32 .npy)\n",
                 kBackendUsage, kPaddingUsage);
    return args.has("help") ? 0 : 2;
  }
  const std::string output = args.get("output", "hidden");
  if (output != "hidden" && output != "pooled" && output != "attention" && output != "logits" && output != "scores" &&
      output != "labels")
    return fail(invalid_argument("--output must be hidden, pooled, attention, logits, scores or labels"));

  npy::Int32Array ids, mask, types;
  if (Status s = read_2d(args.get("ids"), "--ids", &ids, -1, -1); !s) return fail(s);
  const int64_t batch = ids.shape[0], seq = ids.shape[1];
  if (batch < 1 || seq < 1) return fail(invalid_argument("--ids is empty"));
  if (args.has("mask"))
    if (Status s = read_2d(args.get("mask"), "--mask", &mask, batch, seq); !s) return fail(s);
  if (args.has("token-type-ids"))
    if (Status s = read_2d(args.get("token-type-ids"), "--token-type-ids", &types, batch, seq); !s) return fail(s);
  SrcMask src_mask;
  if (args.has("src-mask"))
    if (Status s = read_src_mask(args.get("src-mask"), batch, seq, &src_mask); !s) return fail(s);

  std::unique_ptr<Model> model;
  if (Status s = Model::load(args.positional()[0], &model); !s) return fail(s);
  SessionOptions opt;
  if (batch > 1 << 20 || seq > 1 << 20) return fail(invalid_argument("--ids is too large"));
  opt.max_batch = static_cast<int>(batch);
  opt.max_seq = static_cast<int>(seq);
  if (Status s = apply_backend_args(args, &opt); !s) return fail(s);
  if (Status s = apply_padding_arg(args, &opt); !s) return fail(s);
  if (Status s = args.get_int("threads", 1, &opt.threads); !s) return fail(s);
  opt.src_mask = args.has("src-mask");
  if (output == "attention")
    if (Status s = args.get_int("attention-layer", 0, &opt.attention_layer); !s) return fail(s);
  std::unique_ptr<Session> session;
  if (Status s = Session::create(*model, opt, &session); !s) return fail(s);

  Inputs in;
  in.batch = opt.max_batch;
  in.seq = opt.max_seq;
  in.input_ids = ids.data.data();
  in.attention_mask = args.has("mask") ? mask.data.data() : nullptr;
  in.token_type_ids = args.has("token-type-ids") ? types.data.data() : nullptr;
  if (args.has("src-mask")) {
    in.src_mask_bool = src_mask.blocked.empty() ? nullptr : src_mask.blocked.data();
    in.src_mask_float = src_mask.blocked.empty() ? src_mask.bias.data.data() : nullptr;
    in.src_mask_shape = src_mask.shape;
  }
  if (Status s = session->run(in); !s) return fail(s);

  OutputInfo info;
  if (Status s = session->output(output, &info); !s) return fail(s);
  if (info.dtype == DType::kI32) {
    std::vector<int32_t> labels(info.bytes / sizeof(int32_t));
    if (Status s = session->copy_output(output, labels.data(), info.bytes); !s) return fail(s);
    if (Status s = npy::write_int32(args.get("out"), info.shape, labels.data()); !s) return fail(s);
    return 0;
  }
  std::vector<float> host(info.bytes / sizeof(float));
  if (Status s = session->copy_output(output, host.data(), info.bytes); !s) return fail(s);
  if (Status s = npy::write_float32(args.get("out"), info.shape, host.data()); !s) return fail(s);
  return 0;
}

}  // namespace encrt::cli
