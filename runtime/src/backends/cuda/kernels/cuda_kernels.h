// encrt's own CUDA kernels, behind host-callable launchers (this header is plain C++: the
// backend's .cpp files include it without nvcc). Activations are fp16 or fp32 (Elem), weights of
// norms and biases fp32, statistics (LayerNorm mean and variance, softmax max and sum) and every
// accumulation in fp32. Each launcher enqueues on `stream` and returns the launch's error.
// Semantics are the CPU reference's (runtime/src/kernels/ref/): the backend conformance suite
// holds them to it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace encrt::cuda {

enum class Elem : uint8_t { kF32, kF16 };

// Whether the launchers of this thread start kernels with programmatic dependent launch
// (kernels/dependent_launch.cuh), and a scope that sets it (the backend: option pdl=on, sm_90+).
bool dependent_launch();
class DependentLaunchScope {
 public:
  explicit DependentLaunchScope(bool on);
  ~DependentLaunchScope();
  DependentLaunchScope(const DependentLaunchScope&) = delete;
  DependentLaunchScope& operator=(const DependentLaunchScope&) = delete;

 private:
  bool saved_;
};
inline size_t elem_size(Elem e) { return e == Elem::kF16 ? 2 : 4; }

// The widest row the LayerNorm and embedding kernels hold in registers (256 threads x 16).
constexpr int kMaxRowWidth = 4096;

// How the row kernels (embedding + LayerNorm, LayerNorm, LayerNorm + quantize, quantize) hold a
// row: a warp per row (rows up to kWarpRowWidth wide) or a block per row (row_layout.cuh). kAuto
// is the launchers' choice from what the H200 measured (row_layout.cuh); the backend option
// rows=warp|block forces one, for measuring both.
enum class RowKernels : uint8_t { kAuto, kWarp, kBlock };
// Head sizes the attention kernel takes (it is built for 32, 64 and 128 and runs any size up to
// those: MiniLM's 32, BERT's 64, the fixtures' 8 and 16).
inline bool attention_head_dim_supported(int d) { return d >= 1 && d <= 128; }

// rows of x = word[ids] * scale + position[row % seq] (+ token_type[types]); then LayerNorm with
// gamma/beta when gamma is not null.
struct EmbedArgs {
  int rows = 0, seq = 0, width = 0;
  const int32_t* ids = nullptr;
  const int32_t* token_types = nullptr;  // null: type 0
  const void* word = nullptr;
  Elem word_type = Elem::kF32;
  // Set: the word table is int8 with one fp32 scale per row (an int8 model's), and word_type is
  // not read: the value is float(q) · (row scale · scale), as the CPU backend computes it.
  const float* word_row_scales = nullptr;
  const void* position = nullptr;
  Elem position_type = Elem::kF32;
  const void* token_type_table = nullptr;  // null: the model has no token types
  Elem token_type_type = Elem::kF32;
  float scale = 1.0f;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float eps = 0.0f;
  void* out = nullptr;
  Elem out_type = Elem::kF32;
  // A packed run (plan/token_layout.h), device arrays: row r < offsets[batch] (the real tokens)
  // is the token at source[r] of the [batch, seq] ids and types, at position source[r] % seq;
  // rows from offsets[batch] to `rows` (the bucket a captured graph fixes) are written as zeros.
  // Null: padded, row r is the token at r.
  const int32_t* offsets = nullptr;
  const int32_t* source = nullptr;
  int batch = 0;
  RowKernels layout = RowKernels::kAuto;
};
cudaError_t embed_layer_norm(const EmbedArgs& a, cudaStream_t stream);

// y = LayerNorm(x + bias + residual) per row (bias, residual optional; y may be x).
struct LayerNormArgs {
  int rows = 0, width = 0;
  const void* x = nullptr;
  Elem x_type = Elem::kF32;
  const float* bias = nullptr;
  const void* residual = nullptr;
  Elem residual_type = Elem::kF32;
  const float* gamma = nullptr;
  const float* beta = nullptr;
  float eps = 0.0f;
  void* y = nullptr;
  Elem y_type = Elem::kF32;
  RowKernels layout = RowKernels::kAuto;  // also layer_norm_quantize's
};
cudaError_t layer_norm(const LayerNormArgs& a, cudaStream_t stream);

// Multi-head attention over a fused QKV buffer ([rows, 3 * heads * head_dim]: Q | K | V), with
// the key padding mask (null: every token real). One pass with an online softmax (no [seq, seq]
// scores in memory), or, when probs is set, two passes that also write the probabilities
// [batch, heads, seq, seq] as the reference computes them. Query rows of a sequence without a
// real token get zeros.
struct AttentionArgs {
  int batch = 0, seq = 0, heads = 0, head_dim = 0;
  const void* qkv = nullptr;
  const int32_t* mask = nullptr;
  float scale = 1.0f;
  void* out = nullptr;  // [rows, heads * head_dim], the type of qkv
  float* probs = nullptr;
  Elem type = Elem::kF32;
  // A packed run (plan/token_layout.h): device [batch + 1] row offsets, sequence b's rows (its
  // queries and keys, every one real) are offsets[b] .. offsets[b + 1] - 1 of qkv and out, and
  // seq is the longest sequence's length bound (the grid's extent). Null: padded, sequence b's
  // rows are b · seq .. b · seq + seq - 1 and mask says which keys are real.
  const int32_t* offsets = nullptr;
  // attention_mma only: how many warps share each 16 query rows, splitting the keys (1 or 4;
  // attention_mma_kernel.cuh, kQueryTileOf), or 0: 4 where blocks of 64 query rows would be fewer
  // than two per multiprocessor (sms: the GPU's count), else 1.
  int key_split = 0;
  int sms = 0;
  // attention_mma only: where each warp owns 16 query rows (key_split 1), the next key tile's loads
  // are in flight while the warps compute on this one, as in the split layout (more registers a
  // thread: attention_mma_kernel.cuh, kHoldNextTile). The backend's option attention_prefetch=on.
  bool prefetch_keys = false;
  // attention_mma only: where each warp owns 16 query rows without the held tile, at head_dim ≤ 32,
  // the kernel compiled for 6 resident blocks a multiprocessor (at most 85 registers a thread:
  // attention_mma_kernel.cuh, attention_mma_six_blocks_kernel), the same values. The backend's
  // option attention_occupancy=6.
  bool six_blocks = false;
  // attention_mma only: for fp16 QKV and seq ≤ 128, every key of the sequence in shared memory at
  // once, by cp.async (attention_mma_whole_keys_kernel.cuh: one round trip a block, no staging
  // registers), where each warp owns 16 query rows and, at head_dim ≤ 32, in the split layout too.
  // Before prefetch_keys and six_blocks, which are other builds of the tiled layout. The backend's
  // option attention_keys=whole.
  bool whole_keys = false;
};
constexpr int kAttentionWholeKeysMaxSeq = 128;  // AttentionArgs::whole_keys: the longest sequence it takes
cudaError_t attention(const AttentionArgs& a, cudaStream_t stream);

// y = act(y) + residual elementwise over n values (act: 0 none, 1 ReLU, 2 GELU; residual
// optional). ReLU keeps NaN, GELU is exact (erf).
struct ActivationArgs {
  size_t n = 0;
  void* y = nullptr;
  Elem y_type = Elem::kF32;
  const void* residual = nullptr;
  Elem residual_type = Elem::kF32;
  int activation = 0;
};
cudaError_t activation(const ActivationArgs& a, cudaStream_t stream);

// y = tanh(y) elementwise (the pooler's).
cudaError_t tanh_in_place(size_t n, void* y, Elem type, cudaStream_t stream);

// [batch, width] from hidden rows: the mean over real tokens (mean), or the first token.
struct PoolArgs {
  int batch = 0, seq = 0, width = 0;
  const void* x = nullptr;
  Elem x_type = Elem::kF32;
  const int32_t* mask = nullptr;
  bool mean = true;
  void* out = nullptr;
  Elem out_type = Elem::kF32;
  // A packed run: device [batch + 1] row offsets, sequence b's rows (all real) are offsets[b] ..
  // offsets[b + 1] - 1 and the mask is not read; a sequence without rows gets zeros. Null: padded.
  const int32_t* offsets = nullptr;
};
cudaError_t pool(const PoolArgs& a, cudaStream_t stream);

// ---- int8 linear layers (quantize.cu, int8_epilogue.cu; the arithmetic: int8_math.h).

// kQuantize: rows of x [rows, K] (times multipliers [K] when set) to 8-bit rows [rows, Kp]
// (Kp = K rounded up to 4, the padding bytes the zero point), a scale and a zero point per row,
// exactly as kernels/ref/quantize_ref.cpp. shifted: the bytes are q − 128 as int8 (what the
// cuBLASLt GEMMs read: the cuda backend's storage of quantized rows); else the reference's uint8 q.
struct QuantizeArgs {
  int rows = 0, K = 0;
  const float* x = nullptr;
  const float* multipliers = nullptr;
  void* q = nullptr;  // 4-byte aligned
  bool shifted = true;
  float* scale = nullptr;
  int32_t* zero_point = nullptr;
  RowKernels layout = RowKernels::kAuto;
};
cudaError_t quantize_rows(const QuantizeArgs& a, cudaStream_t stream);

// After cuBLASLt's D = Σ (q − 128)·w ([rows, ld_d] int32, ld_d = N rounded up to 4):
// y = act(float(D + (128 − zp)·w_sum) · x_scale · w_scale + bias) + residual, fp32, exactly as the
// reference's gemm_u8s8 and epilogue (activation: 0 none, 1 ReLU, 2 GELU). w_scale, w_sum (and
// bias) have ld_d entries, zero past N. With next_q set, the rows of y are also quantized for the
// next int8 linear (its kQuantize op, fused: N <= kMaxRowWidth), and y may then be null.
struct Int8EpilogueArgs {
  int rows = 0, N = 0, ld_d = 0;
  const int32_t* d = nullptr;
  const float* x_scale = nullptr;      // [rows]
  const int32_t* x_zero_point = nullptr;  // [rows]
  const float* w_scale = nullptr;
  const int32_t* w_sum = nullptr;
  const float* bias = nullptr;  // null: none
  int activation = 0;
  const float* residual = nullptr;  // [rows, N] or null
  float* y = nullptr;               // [rows, N]
  // The fused next quantization (QuantizeArgs' meaning, K = N).
  const float* next_multipliers = nullptr;
  void* next_q = nullptr;
  bool next_shifted = true;
  float* next_scale = nullptr;
  int32_t* next_zero_point = nullptr;
};
cudaError_t int8_epilogue(const Int8EpilogueArgs& a, cudaStream_t stream);

// LayerNorm (layer_norm's semantics, fp32 rows only; norm.y may be null: not written) fused with
// the next int8 linear's quantization of the normalized rows (QuantizeArgs' meaning, K = width).
struct LayerNormQuantizeArgs {
  LayerNormArgs norm;
  const float* multipliers = nullptr;
  void* q = nullptr;
  bool shifted = true;
  float* scale = nullptr;
  int32_t* zero_point = nullptr;
};
cudaError_t layer_norm_quantize(const LayerNormQuantizeArgs& a, cudaStream_t stream);

// After a packed run: [batch, seq] rows of `row_words` 4-byte words in `out` from the packed rows
// in `packed` (a copy: a scatter in place would overwrite rows not yet moved), row r going to
// position source[r] and every other position (padding) to zeros. Device arrays as EmbedArgs'.
struct ExpandRowsArgs {
  int batch = 0, seq = 0;
  size_t row_words = 0;
  const int32_t* offsets = nullptr;
  const int32_t* source = nullptr;
  const void* packed = nullptr;
  void* out = nullptr;
};
cudaError_t expand_packed_rows(const ExpandRowsArgs& a, cudaStream_t stream);

// An int8 linear's weights as fp16 (option int8_linears; dequantize_weights_kernel.cuh):
// out[n, k] = half(float(double(q[n, k]) · scales[n] · multipliers[k])), row-major [N, K], the bits
// of the host's model/dequantized_linears.h. Once, at session creation (not a launch of run()).
struct DequantizeWeightsArgs {
  int N = 0, K = 0;
  const int8_t* q = nullptr;            // [N, K] row-major
  const float* scales = nullptr;        // [N]
  const float* multipliers = nullptr;   // [K] or null (1)
  void* out = nullptr;                  // fp16 [N, K]
};
cudaError_t dequantize_weights(const DequantizeWeightsArgs& a, cudaStream_t stream);

// Whether this build's device code loads on the current device (cudaErrorNoKernelImageForDevice
// when the GPU's architecture is not among those compiled).
cudaError_t kernels_loadable();

// The tensor-core attention kernel (attention_mma.cu): attention()'s semantics for fp16 or fp32
// QKV without probabilities, on mma.sync (sm_80 and newer), head_dim 16, 32 or 64; fp16 QKV on
// fp16 tensor cores with P rounded to fp16 for P·V, fp32 QKV (and output) on bf16 ones: Q, K, V
// and P rounded to bf16 (≤ 2^-8 relative each: lossy, so the backend takes it for an fp32 model's
// attention only when asked). The padded layout with its mask, or the packed one (offsets).
// Anything else (probabilities, another head size) is cudaErrorInvalidValue: the caller chooses
// (attention_mma_supported) and runs attention() otherwise.
inline bool attention_mma_head_dim_supported(int d) { return d == 16 || d == 32 || d == 64; }
inline bool attention_mma_supported(int head_dim, Elem type, bool probs, int cc_major) {
  return attention_mma_head_dim_supported(head_dim) && (type == Elem::kF16 || type == Elem::kF32) && !probs &&
         cc_major >= 8;
}
cudaError_t attention_mma(const AttentionArgs& a, cudaStream_t stream);
// How many blocks of the kernel attention_mma would launch for a large grid (key_split 1) with
// a's head_dim, type, seq, whole_keys, prefetch_keys and six_blocks fit on one multiprocessor of the current GPU
// at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor), into *blocks; for `inspect`.
cudaError_t attention_mma_resident_blocks(const AttentionArgs& a, int* blocks);

// ---- The int8 tensor-core GEMM with the epilogue fused in (gemm_i8_mma.cu; the device code and
// its design: gemm_i8_mma_kernel.cuh). y = act(float(Σ x'·w + (128 − zp)·w_sum) · x_scale · w_scale
// + bias) + residual, int8_epilogue()'s values (the same int8_epilogue_value.cuh), with no int32 D
// in memory. mma.sync m16n8k32 s8 (sm_80 and newer); the caller chooses (gemm_i8_mma_supported)
// and runs cuBLASLt + int8_epilogue() otherwise.
// The block tile gemm_i8_mma() takes, rows × columns (gemm_i8_mma_kernel.cuh: each of the 4 warps
// a quarter of it).
enum class GemmI8Tile : int { kAuto, k32, k64, k128x64, k128 };
constexpr int tile_rows(GemmI8Tile t) { return t == GemmI8Tile::k32 ? 32 : t == GemmI8Tile::k64 ? 64 : 128; }
constexpr int tile_cols(GemmI8Tile t) {
  return t == GemmI8Tile::k32 ? 32 : t == GemmI8Tile::k64 || t == GemmI8Tile::k128x64 ? 64 : 128;
}
struct GemmI8MmaArgs {
  int M = 0, N = 0;
  int ld_w = 0;  // rows of w: N rounded up to 4 (rows past N zero)
  int Kp = 0;    // K rounded up to 4: the row stride of x and w
  const void* x = nullptr;    // int8 q − 128 [M, Kp], 4-byte aligned (16 for the 16-byte copies)
  const int8_t* w = nullptr;  // int8 [ld_w, Kp] row-major
  const float* x_scale = nullptr;         // [M]
  const int32_t* x_zero_point = nullptr;  // [M]
  const float* w_scale = nullptr;         // [ld_w]
  const int32_t* w_sum = nullptr;         // [ld_w]
  const float* bias = nullptr;            // [ld_w] or null
  int activation = 0;                     // 0 none, 1 ReLU, 2 GELU
  const float* residual = nullptr;        // [M, N] or null
  float* y = nullptr;                     // [M, N]
  // The GPU's multiprocessors: the tile is chosen so that even M = 128 gives a full wave.
  int sms = 0;
  GemmI8Tile tile = GemmI8Tile::kAuto;  // kAuto: gemm_i8_mma_tile(M, N, sms); else this one
};
// K at most kGemmI8MmaMaxKp: every int32 sum of 128 · 128 products stays below 2^31.
constexpr int kGemmI8MmaMaxKp = 131068;
inline bool gemm_i8_mma_supported(int cc_major, int Kp) { return cc_major >= 8 && Kp <= kGemmI8MmaMaxKp; }
cudaError_t gemm_i8_mma(const GemmI8MmaArgs& a, cudaStream_t stream);
// How many blocks of the kernel with `tile` (16-byte copies) fit on one multiprocessor of the
// current GPU at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor), into *blocks; for `inspect`.
cudaError_t gemm_i8_mma_resident_blocks(GemmI8Tile tile, int* blocks);
// The largest tile that still gives every multiprocessor a block: a larger tile loads fewer bytes
// per product (128 per k-byte of a 128 × 128 tile, 64 at 64 × 64) and spends fewer shared-memory
// loads per mma.sync (16 and 8 bytes a lane), but a grid with fewer blocks than multiprocessors
// leaves some idle. MiniLM on an H200 (132 SMs): batch 1 (M = 128) takes 32 × 32 for every shape
// (48 blocks for N = 384, 192 for 1536; 12 and 48 at 64 × 64); batch 32 (M = 4096) 128 × 64 for
// N = 384 (192 blocks) and 128 × 128 for 1152 and 1536 (288, 384). (A split over K would give more
// blocks at batch 1, but its partial sums would have to meet in memory before the epilogue: the
// round trip this kernel exists to remove.) Not yet measured against the forced tiles on a GPU:
// the backend's option int8_tile forces one (GemmI8MmaArgs::tile).
inline GemmI8Tile gemm_i8_mma_tile(int M, int N, int sms) {
  for (GemmI8Tile t : {GemmI8Tile::k128, GemmI8Tile::k128x64, GemmI8Tile::k64}) {
    const long blocks = static_cast<long>((M + tile_rows(t) - 1) / tile_rows(t)) *
                        static_cast<long>((N + tile_cols(t) - 1) / tile_cols(t));
    if (blocks >= sms) return t;
  }
  return GemmI8Tile::k32;
}

// ---- The fp16 tensor-core GEMM for small row counts (gemm_f16_mma.cu; the device code and its
// design: gemm_f16_mma_kernel.cuh): y = fp16(act(x · wᵀ + bias) + residual), fp16 operands and
// output, fp32 sums and epilogue, one rounding at the store. mma.sync m16n8k16 (sm_80 and newer),
// K a multiple of 8; the caller chooses (gemm_f16_mma_supported) and runs cuBLASLt otherwise.
struct GemmF16MmaArgs {
  int M = 0, N = 0;
  int K = 0;                       // a multiple of 8: the row stride of x and w
  const void* x = nullptr;         // fp16 [M, K], 16-byte aligned
  const void* w = nullptr;         // fp16 [N, K] row-major, 16-byte aligned
  const void* bias = nullptr;      // fp16 [N] or null
  int activation = 0;              // 0 none, 1 ReLU, 2 GELU (exact erf)
  const void* residual = nullptr;  // fp16 [M, N] or null
  void* y = nullptr;               // fp16 [M, N]
  int sms = 0;                     // the GPU's multiprocessors (the tile choice)
};
inline bool gemm_f16_mma_supported(int cc_major, int K) { return cc_major >= 8 && K > 0 && K % 8 == 0; }
cudaError_t gemm_f16_mma(const GemmF16MmaArgs& a, cudaStream_t stream);
// The block tile (square, this many rows and columns): 64 where that gives every multiprocessor
// a block, else 32 (MiniLM at batch 1 on an H200: 48, 144 and 192 blocks for N = 384, 1152, 1536).
inline int gemm_f16_mma_tile(int M, int N, int sms) {
  const long blocks64 = static_cast<long>((M + 63) / 64) * static_cast<long>((N + 63) / 64);
  return blocks64 >= sms ? 64 : 32;
}

// ---- Post-norm's linear + bias + residual + LayerNorm in one kernel (gemm_f16_layer_norm.cu; the
// device code and its design: gemm_f16_layer_norm_kernel.cuh): y = fp16(LayerNorm(x · wᵀ + bias +
// residual) · gamma + beta), fp16 operands, fp32 sums, statistics and epilogue. A row's columns
// spread over a thread-block cluster of up to 8 (or 16) blocks of BN columns (sm_90 and newer), K a
// multiple of 8, N at most 8 · 128; the caller chooses (gemm_f16_layer_norm_supported) and runs
// the linear and the LayerNorm kernel otherwise.
struct GemmF16LayerNormArgs {
  int M = 0, N = 0;
  int K = 0;                       // a multiple of 8: the row stride of x and w
  const void* x = nullptr;         // fp16 [M, K], 16-byte aligned
  const void* w = nullptr;         // fp16 [N, K] row-major, 16-byte aligned
  const float* bias = nullptr;     // fp32 [N] or null
  const void* residual = nullptr;  // fp16 [M, N] or null; may be y itself (not x)
  const float* gamma = nullptr;    // fp32 [N]
  const float* beta = nullptr;     // fp32 [N]
  float eps = 0.0f;
  void* y = nullptr;  // fp16 [M, N]
  // The most blocks a cluster may have: 8 (portable: every sm_90 GPU runs them) or 16 (where
  // gemm_f16_layer_norm_prepare found that the GPU runs them: half the columns, so half the
  // weights, a block), or 4 (twice the columns a block: each row of x read by half the blocks).
  int max_cluster = 8;
  // Rows a block: 16 (4 warps split each block's K: gemm_f16_layer_norm_kernel.cuh) or 64 (a warp
  // a 16-row tile over the whole K: gemm_f16_layer_norm_rows_kernel.cuh, 4× fewer weight reads for
  // many rows); gemm_f16_layer_norm_rows chooses.
  int block_rows = 16;
};
// Columns a block takes (BN): the narrowest of 24, 32, 48, 64, 96, 128 with at most max_cluster
// blocks a row (MiniLM's 384: 48, a cluster of 8; 24, a cluster of 16); 0 past 1024 columns.
inline int gemm_f16_layer_norm_columns(int N, int max_cluster = 8) {
  for (int bn : {24, 32, 48, 64, 96, 128})
    if ((N + bn - 1) / bn <= max_cluster) return bn;
  return 0;
}
inline bool gemm_f16_layer_norm_supported(int cc_major, int N, int K) {
  return cc_major >= 9 && K > 0 && K % 8 == 0 && N > 0 && gemm_f16_layer_norm_columns(N) > 0;
}
// Whether clusters of up to 16 blocks go to work at M rows: where each block of the grid then
// still has a multiprocessor of its own (MiniLM at batch 1 on an H200: 8 row tiles × 16 blocks =
// 128 of 132) and the GPU runs all ⌈M / 16⌉ clusters at once (active16: how many clusters of 16 of
// the kernel it runs at once, the prepare functions' count; a cluster's blocks must share a GPC, so
// a GPU may run fewer than sms / 16 of them, and a second wave would double the time), else 8.
inline int gemm_f16_layer_norm_cluster_for(int M, int sms, int active16) {
  const int tiles = (M + 15) / 16;
  return tiles * 16 <= sms && tiles <= active16 ? 16 : 8;
}
// The rows a block takes at M rows (GemmF16LayerNormArgs::block_rows): 64 where 64-row blocks
// still give every multiprocessor one (MiniLM at batch 32 on an H200: 64 row tiles × 8 blocks =
// 512), else 16 (batch 1: 2 × 8 = 16 blocks of 64 rows would leave 116 multiprocessors idle).
inline int gemm_f16_layer_norm_rows(int M, int N, int max_cluster, int sms) {
  const int bn = gemm_f16_layer_norm_columns(N, max_cluster);
  if (bn == 0) return 16;
  const long blocks64 = static_cast<long>((M + 63) / 64) * static_cast<long>((N + bn - 1) / bn);
  return blocks64 >= sms ? 64 : 16;
}
cudaError_t gemm_f16_layer_norm(const GemmF16LayerNormArgs& a, cudaStream_t stream);
// At session creation, for a row width N and block_rows 16 or 64: raises the kernel's
// shared-memory limit (it takes more than 48 KB) and checks that the current GPU can run its
// clusters (cudaErrorNotSupported if not); *active_clusters (when set): how many of them it runs
// at once.
cudaError_t gemm_f16_layer_norm_prepare(int N, int max_cluster, int* active_clusters = nullptr, int block_rows = 16);

// ---- Post-norm's feed-forward block in one kernel (ffn_layer_norm.cu; the device code and its
// design: ffn_layer_norm_kernel.cuh): y = fp16(LayerNorm(fp16(act(x · w1ᵀ + b1)) · w2ᵀ + b2 +
// residual) · gamma + beta), the up projection's columns and the down projection's over a
// thread-block cluster (sm_90), H and F multiples of 8, H at most 8 · 128, the shared memory
// within the GPU's (ffn_layer_norm_supported); the caller runs the linears and the LayerNorm
// kernel otherwise. With a projection (option linear_norm=layer), the kernel first computes x
// itself as the attention's output projection and its LayerNorm (the rest of an encoder layer
// after its attention, in one kernel): x = fp16(LayerNorm(in · wᵀ + bias + residual) · gamma +
// beta), written to `out`, which must be x (the block's input, and usually its residual). y may
// be `in` or the projection's residual, but never partly over either (rows of them that another
// cluster reads: the backend checks, layer_tail_memory_fits).
struct FfnProjection {
  const void* in = nullptr;        // fp16 [M, H] (the attention's output), 16-byte aligned; null: no projection
  const void* w = nullptr;         // fp16 [H, H] row-major, 16-byte aligned
  const float* bias = nullptr;     // fp32 [H] or null
  const void* residual = nullptr;  // fp16 [M, H] or null; not `out`
  const float* gamma = nullptr;    // fp32 [H]
  const float* beta = nullptr;     // fp32 [H]
  float eps = 0.0f;
  void* out = nullptr;             // fp16 [M, H]: FfnLayerNormArgs::x
};
struct FfnLayerNormArgs {
  int M = 0;
  int H = 0;                       // x's and y's width: the up projection's K, the down projection's N
  int F = 0;                       // the up projection's N, the down projection's K
  const void* x = nullptr;         // fp16 [M, H], 16-byte aligned
  const void* w1 = nullptr;        // fp16 [F, H] row-major, 16-byte aligned
  const void* b1 = nullptr;        // fp16 [F] or null
  int activation = 0;              // of the up projection: 0 none, 1 ReLU, 2 GELU (exact erf)
  const void* w2 = nullptr;        // fp16 [H, F] row-major, 16-byte aligned
  const float* b2 = nullptr;       // fp32 [H] or null
  const void* residual = nullptr;  // fp16 [M, H] or null; may be x or y
  const float* gamma = nullptr;    // fp32 [H]
  const float* beta = nullptr;     // fp32 [H]
  float eps = 0.0f;
  void* y = nullptr;  // fp16 [M, H]; may be x
  int max_cluster = 8;  // as GemmF16LayerNormArgs's (ffn_layer_norm_prepare says whether 16 runs)
  FfnProjection projection;  // optional (projection.in null: none)
};
// Whether the kernel (with a projection: its projecting build) can run these widths on a GPU of
// compute capability cc_major whose blocks may have max_shared_bytes of dynamic shared memory
// (cudaDevAttrMaxSharedMemoryPerBlockOptin).
bool ffn_layer_norm_supported(int cc_major, int H, int F, int max_shared_bytes, int max_cluster, bool projection = false);
cudaError_t ffn_layer_norm(const FfnLayerNormArgs& a, cudaStream_t stream);
// At session creation: raises the kernel's shared-memory limit and checks that the GPU can run
// its clusters (cudaErrorNotSupported if not); *active_clusters (when set): how many at once.
cudaError_t ffn_layer_norm_prepare(int H, int F, int max_cluster, int* active_clusters = nullptr, bool projection = false);

// ---- An encoder layer's QKV projection and attention in one kernel (qkv_attention.cu; the device
// code and its design: qkv_attention_kernel.cuh): fp16, padded rows of sequences of at most 128
// tokens, head_dim 32 or 64, no probabilities; a sequence's 16-row tiles over a thread-block
// cluster (sm_90). The caller runs the QKV linear and the attention kernel otherwise.
struct QkvAttentionArgs {
  int batch = 0, seq = 0, heads = 0, head_dim = 0;
  int width = 0;                  // x's width (the projection's K), a multiple of 8
  const void* x = nullptr;        // fp16 [batch · seq, width], 16-byte aligned
  const void* w = nullptr;        // fp16 [3 · heads · head_dim, width] row-major (Q | K | V rows), 16-byte aligned
  const void* bias = nullptr;     // fp16 [3 · heads · head_dim] or null
  const int32_t* mask = nullptr;  // [batch, seq], 0 = a padded key; null: every key real
  float scale = 1.0f;
  void* out = nullptr;  // fp16 [batch · seq, heads · head_dim]
  int cluster = 0;      // set by the launcher: ⌈seq / 16⌉ blocks a cluster
};
constexpr int kQkvAttentionMaxSeq = 128;
inline bool qkv_attention_supported(int cc_major, int head_dim, int width) {
  return cc_major >= 9 && (head_dim == 32 || head_dim == 64) && width > 0 && width % 8 == 0;
}
cudaError_t qkv_attention(const QkvAttentionArgs& a, cudaStream_t stream);
// At session creation: raises the kernel's shared-memory limit and checks that the GPU can run a
// cluster of 8 of its blocks (cudaErrorNotSupported if not).
cudaError_t qkv_attention_prepare(int head_dim);

}  // namespace encrt::cuda

namespace encrt::cuda {

// ---- The int8 tensor-core attention kernel (attention_i8_mma.cu; the device code and its
// design: attention_i8_mma_kernel.cuh): an int8 model's attention op (AttentionParams::int8) with
// the CPU reference's int8 semantics (kernels/ref/attention_i8_ref.cpp: per-token int8 Q, K, V,
// u8 probabilities) on mma.sync m16n8k32 s8 and u8·s8 (sm_80 and newer), fp32 QKV in and out,
// head_dim 32 or 64, sequences of at most kAttentionI8MmaMaxSeq tokens (the block holds the
// sequence's int8 K and V in dynamic shared memory: 84 KB at 512 × 64), no probabilities. The
// padded layout with its mask, or the packed one. Anything else is cudaErrorInvalidValue.
// attention_i8_mma_prepare() lets the kernel have that much shared memory on the current device:
// call it once per device before the first launch (at session creation, outside any capture).
constexpr int kAttentionI8MmaMaxSeq = 512;
inline bool attention_i8_mma_head_dim_supported(int d) { return d == 32 || d == 64; }
inline bool attention_i8_mma_supported(int head_dim, int seq, bool probs, int cc_major) {
  return attention_i8_mma_head_dim_supported(head_dim) && seq >= 0 && seq <= kAttentionI8MmaMaxSeq && !probs &&
         cc_major >= 8;
}
cudaError_t attention_i8_mma_prepare();
cudaError_t attention_i8_mma(const AttentionArgs& a, cudaStream_t stream);
// The dynamic shared memory of one block at head_dim (32 or 64) and a sequence bound seq.
size_t attention_i8_mma_shared_bytes(int head_dim, int seq);

}  // namespace encrt::cuda
