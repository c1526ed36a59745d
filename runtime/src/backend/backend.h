// The backend seam: what the core asks of a backend, as a small table of functions (in the
// manner of ggml's ggml_backend_i and ExecuTorch's BackendInterface). A backend is a folder
// under backends/, one such table, and its rows in the conformance suite; nothing else in the
// runtime changes for a new one.
//
// The core (session/) owns the graph, the placement and the arena plans. For one session it:
//   1. create()s a context per backend it uses (the chosen one, and the CPU backend for the ops
//      the chosen one does not support());
//   2. places each op, inserting kCopy ops where a buffer crosses between memories;
//   3. asks each backend for the scratch_bytes() of its ops and plans one arena per memory with
//      that memory's alignment (arena_alignment), allocating device arenas with alloc_arena();
//   4. prepare()s each backend with its ops (upload or repack weights, create operators);
//   5. on every run, calls run() on each maximal run of consecutive ops of one backend (a
//      segment) with every buffer's address in `buffers`; after a packed run, expand_packed() for
//      each token-level output in a device memory, then synchronize().
// Entries marked (optional) may be null: the core then does the plain thing, as described.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "encrt/status.hpp"
#include "plan/graph.h"
#include "plan/token_layout.h"

namespace encrt::backend {

using Options = std::map<std::string, std::string>;

// Host memory is addressable by the CPU; device memory only through the backend's copies.
enum class MemoryKind : uint8_t { kHost, kDevice };

struct Shape {
  int batch = 0;
  int seq = 0;
};

// What a backend holds for a session, as prepare() reports it.
struct HeldBytes {
  size_t weights_in_place = 0;  // model-file bytes read where they are mapped
  size_t weights_copied = 0;    // weights copied or uploaded as they are
  size_t weights_packed = 0;    // weights repacked into a layout of the backend's own
};

struct PrepareArgs {
  const detail::ModelImpl* model = nullptr;
  const plan::Graph* graph = nullptr;
  const int* ops = nullptr;  // the ops placed on this backend, in graph order
  int op_count = 0;
  Shape max;                 // the session's max_batch, max_seq
  // Whether runs may be packed (RunArgs::packed): a backend sizes what a packed run needs (the
  // layout's device copy, expand_packed's scratch) only then.
  bool may_pack = false;
};

struct RunArgs {
  const plan::Graph* graph = nullptr;
  const int* ops = nullptr;  // a segment: op indices, in order, all placed on this backend
  int op_count = 0;
  void* const* buffers = nullptr;  // by buffer id: its address in its memory (null: an absent input)
  Shape shape;                     // this run's batch and sequence length
  // The layout of this run's src mask (inputs "src_mask_bool" / "src_mask_float", when bound):
  // true: [batch, seq, seq]; false: one [seq, seq] for every sequence.
  bool src_mask_per_sequence = false;
  // Null: the run is padded (every buffer of token rows holds batch · seq rows). Set: a packed
  // run (plan/token_layout.h): the graph's token-row buffers hold packed->tokens rows, sequence
  // after sequence; attention and pooling use the per-sequence offsets, the embedding each row's
  // original position, and the [batch, seq] inputs keep their shape. Given only to backends whose
  // supports_packed() accepts every op of the session.
  const plan::TokenLayout* packed = nullptr;
};

// One option a backend's tuning may set (BackendInterface::tuning).
struct TuningChoice {
  const char* key;
  const char* const* values;  // null-terminated; values[0]: the backend's behaviour without the option
  // (optional) The option whose value decides whether this one does anything (a kernel's builds
  // matter only where that kernel runs): it is tried only where `parent` (an earlier entry) has one
  // of parent_values (null-terminated), and together with each of those values when the tuner
  // tries it (a parent value slower alone may be faster with one of its dependents).
  const char* parent = nullptr;
  const char* const* parent_values = nullptr;
};

struct BackendInterface {
  const char* name;         // "cpu", "xnnpack", ...
  MemoryKind memory;
  size_t arena_alignment;   // of every buffer in its memory's arena (a power of two, >= 64)
  size_t read_overrun;      // bytes past the end of a buffer its ops may read (planned as padding)
  const char* const* option_keys;  // the option names it takes, null-terminated

  // Creates the backend's state for one session. `options` holds only keys this backend
  // declares; an invalid value is an error that names the option.
  Status (*create)(const Options& options, int threads, void** context);
  void (*destroy)(void* context);
  // Whether the backend can run `op` of `graph` (kCopy: only backends with device memory).
  bool (*supports)(const void* context, const plan::Graph& graph, const plan::Op& op);
  // Workspace `op` needs at the maximum shape, in bytes (0: none); planned as the op's scratch.
  size_t (*scratch_bytes)(const void* context, const plan::Graph& graph, const plan::Op& op, Shape max);
  // Uploads or repacks weights and creates operators for its ops, once per session.
  Status (*prepare)(void* context, const PrepareArgs& args, HeldBytes* held);
  // Runs a segment; a failure (a device error) is a Status, never an abort.
  Status (*run)(void* context, const RunArgs& args);
  // The kernel or operator that runs `op` (for placement reports and profiles).
  std::string (*implementation)(const void* context, const plan::Graph& graph, const plan::Op& op);
  // One line: the kernels or operators chosen, threads, device.
  std::string (*summary)(const void* context);

  // (optional) Whether the backend can run on this machine (a device present). Null: always.
  bool (*available)(std::string* why_not);
  // (optional) Device memory for its arena. Null: host memory from the core (MemoryKind::kHost
  // backends share the host arena).
  Status (*alloc_arena)(void* context, size_t bytes, void** arena);
  void (*free_arena)(void* context, void* arena);
  // (optional) Copies between host memory and its memory, ordered after the work already
  // submitted (async on a device stream). Null: memcpy (host memory).
  Status (*copy_to_host)(void* context, void* dst, const void* src, size_t bytes);
  Status (*copy_from_host)(void* context, void* dst, const void* src, size_t bytes);
  // (optional) Waits for all submitted work. Null: run() and the copies are synchronous.
  Status (*synchronize)(void* context);
  // (optional) Capture/replay of a segment (CUDA graphs): replay() runs the capture made for
  // args' segment and shape, setting *replayed, or sets *replayed = false if there is none;
  // capture() runs the segment once while recording it. Null: run() every time.
  Status (*replay)(void* context, const RunArgs& args, bool* replayed);
  Status (*capture)(void* context, const RunArgs& args);
  // (optional) Runs a segment, timing each op on the backend's own clock (device events):
  // ms[i] for args.ops[i]. Null: the core runs the segment op by op with a host clock.
  Status (*run_profiled)(void* context, const RunArgs& args, double* ms);
  // (optional) The element type the backend stores buffer `buffer` of its memory in (e.g. fp16
  // activations on a GPU for an fp16 model), planned at that size; the graph's buffer takes it
  // before prepare. Null: the graph's dtype.
  DType (*storage_dtype)(const void* context, const plan::Graph& graph, int buffer);
  // (optional) Device time of the last segment it ran, in ms (device events), after
  // synchronize; < 0 when unknown. Null: the backend has no clock of its own.
  double (*last_device_ms)(void* context);
  // (optional) Whether the backend runs `op` on a packed layout (RunArgs::packed). Null: never;
  // a session with an op on such a backend runs padded (SessionOptions::padding auto) or refuses
  // packed at creation. Token-level outputs in host memory are expanded by the core
  // (plan::expand_rows); those in a device memory by that memory's backend (expand_packed).
  bool (*supports_packed)(const void* context, const plan::Graph& graph, const plan::Op& op);
  // (optional) After a packed run: expands token-level output `buffer` of its memory, in place,
  // from args.packed->tokens packed rows to [batch, seq] rows with every padding position zero
  // bytes (what plan::expand_rows does in host memory), so that the output's device address holds
  // the same layout as a padded run's. The core calls it once per such output after the run's
  // last segment and before synchronize(); it is ordered after the work already submitted. Null:
  // a session with a token-level output in this backend's memory never packs.
  Status (*expand_packed)(void* context, const RunArgs& args, int buffer);
  // (optional) Whether a session of an int8 model runs its int8 linears as fp16 ones
  // (model/dequantized_linears.h: the weights dequantized once per model, no quantize ops, float
  // attention), from the backend's options and the session's maximum shape: where its fp16 kernels
  // are faster than its int8 ones (the cuda backend). The session asks each of its backends before
  // it builds the graph; one yes decides. The views' fp16 panels (LinearView::packed) are made for
  // the ops of every backend except a device backend that answered yes: that one reads the int8
  // linear (LinearView::dequantized_from) and dequantizes it on its device. Null: never.
  bool (*dequantizes_int8_linears)(const void* context, Shape max);
  // (optional) What tuning (encrt::tune_backend_options, `encrt tune`) may try: for each option
  // worth measuring, its values, the first being what the backend does without the option;
  // ended by an entry whose key is null. A value may be refused on some machines or with other
  // options (the tuner records the refusal and goes on). Null: nothing to tune.
  const TuningChoice* tuning;
};

// True when `b` has every required entry (the registry checks each table once).
bool is_complete(const BackendInterface& b);

}  // namespace encrt::backend
