// A host-only fake of NVIDIA cuBLASLt, built as a shared library for the emulated CUDA device: the
// cuda backend dlopen()s it through ENCRT_CUBLASLT=PATH (backends/cuda/cublaslt_library.cpp) on a
// machine without a GPU, where device memory is plain host memory and streams run synchronously.
// cublasLtMatmul therefore computes its result on the host before it returns, reading and writing
// the "device" pointers directly.
//
// It exports, with the toolkit header's exact C signatures, the fourteen functions the backend
// binds: cublasLtCreate/Destroy, cublasLtGetVersion, cublasLtMatmulDesc{Create,Destroy,SetAttribute},
// cublasLtMatrixLayout{Create,Destroy,SetAttribute}, cublasLtMatmulPreference{Create,Destroy,
// SetAttribute}, cublasLtMatmulAlgoGetHeuristic and cublasLtMatmul. The opaque handles point at
// this file's own structs, each stamped with a magic number so that a handle of the wrong kind (or
// a dangling one) is refused rather than misread.
//
// What it computes: D = Activation(alpha · op(A) · op(B) + beta · C + bias), column-major, the
// formula cuBLASLt documents for cublasLtMatmul (bias and activation after beta · C),
// with op() from TRANSA / TRANSB and every matrix's own leading dimension. Supported:
//   - compute 32F, 32F_PEDANTIC or 32F_FAST_TF32 with scale type 32F (alpha and beta as float), for
//     A/B/C=D types 32F/32F/32F, 16F/16F/16F and 16F/16F/32F (FAST_TF32: 32F only). Products are
//     accumulated in double, which is at least as accurate as any of these modes allows (TF32
//     *permits* the library to drop input bits; it does not require it), and the result is rounded
//     once to the D type (fp16: round to nearest even, through round-to-odd float, no double rounding).
//   - compute 32I or 32I_PEDANTIC with scale type 32I (alpha and beta as int32): int8 A and B into
//     int32 C = D, under cuBLASLt's own rules for int8 in the regular column order: TN only, m and k
//     multiples of 4, every leading dimension a multiple of 4, pointers 4-byte aligned. Arithmetic
//     wraps modulo 2^32 as an int32 accumulator does. No epilogue.
//   - epilogues DEFAULT, BIAS, GELU and GELU_BIAS (floating point only): the bias is a packed vector
//     of D's type (BIAS_DATA_TYPE unset or equal to it) with one value per row of D; GELU is the
//     tanh approximation 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))), taken as the form of
//     NVIDIA's GELU epilogue. It differs from the exact (erf) GELU, which encrt's own kernel
//     computes, by up to 4.8e-4 in absolute terms (near x = -2.7).
//   - C == D (in place, same leading dimension); beta == 0 leaves C unread and alpha == 0 leaves A
//     and B unread, as BLAS does (a fresh output buffer given as C may hold garbage).
//   - pointer modes HOST and DEVICE (both are host memory here); workspace sizes are accepted and
//     none is used. The work is done when the call returns, except on a stream being captured into
//     a CUDA graph (emulated_cuda_runtime.cpp), where it becomes a host function of the graph that
//     each replay runs.
// Refused: anything else. Attributes it does not implement return CUBLAS_STATUS_NOT_SUPPORTED when
// set (other orders than COL, batches, other epilogues, scale pointers, ...), a wrongly sized
// attribute value or a wrong handle CUBLAS_STATUS_INVALID_VALUE, inconsistent shapes or leading
// dimensions CUBLAS_STATUS_INVALID_VALUE, and a type, compute or int8-shape combination outside the
// list above CUBLAS_STATUS_NOT_SUPPORTED, from the heuristic and the matmul alike: it never computes
// something it does not model exactly.

// The header's declarations, and so the definitions below, keep default visibility whatever the
// build's preset: these functions are the library's interface.
#pragma GCC visibility push(default)
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#pragma GCC visibility pop

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "core/half.h"

// The emulated runtime's (emulated_cuda_runtime.cpp), from the program that loads this library,
// which exports them; weak, so that the library also loads where nothing defines them (then every
// multiplication runs at the call).
#pragma weak cudaStreamIsCapturing
#pragma weak cudaLaunchHostFunc

namespace {

// Magic numbers in the first word of each struct, so a handle is checked before it is trusted.
constexpr uint64_t kHandleMagic = 0x46414b454c544831ull;      // "FAKELTH1"
constexpr uint64_t kDescMagic = 0x46414b454c544431ull;        // "FAKELTD1"
constexpr uint64_t kLayoutMagic = 0x46414b454c544c31ull;      // "FAKELTL1"
constexpr uint64_t kPreferenceMagic = 0x46414b454c545031ull;  // "FAKELTP1"
// The tag in data[0] of every algorithm the heuristic hands out: the one algorithm this fake has.
constexpr uint64_t kAlgoTag = 0x46414b454c544131ull;  // "FAKELTA1"

struct Handle {
  uint64_t magic = kHandleMagic;
};

struct MatmulDesc {
  uint64_t magic = kDescMagic;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;
  int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  cublasOperation_t transa = CUBLAS_OP_N;
  cublasOperation_t transb = CUBLAS_OP_N;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  int32_t bias_type = -1;  // -1: D's type, cuBLASLt's default
};

struct Layout {
  uint64_t magic = kLayoutMagic;
  cudaDataType_t type = CUDA_R_32F;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
};

struct Preference {
  uint64_t magic = kPreferenceMagic;
  uint64_t max_workspace_bytes = 0;  // kept for completeness: the fake's algorithm needs none
};

template <typename Struct, typename Opaque>
Struct* checked(Opaque opaque, uint64_t magic) {
  Struct* s = reinterpret_cast<Struct*>(opaque);
  return s && s->magic == magic ? s : nullptr;
}

Handle* handle_of(cublasLtHandle_t h) { return checked<Handle>(h, kHandleMagic); }
MatmulDesc* desc_of(cublasLtMatmulDesc_t d) { return checked<MatmulDesc>(d, kDescMagic); }
Layout* layout_of(cublasLtMatrixLayout_t l) { return checked<Layout>(l, kLayoutMagic); }
Preference* preference_of(cublasLtMatmulPreference_t p) { return checked<Preference>(p, kPreferenceMagic); }

// An attribute's value, whose size must be the attribute's own, as cuBLASLt requires.
template <typename T>
bool read_value(const void* buf, size_t size, T* out) {
  if (!buf || size != sizeof(T)) return false;
  std::memcpy(out, buf, sizeof(T));
  return true;
}

bool integer_compute(cublasComputeType_t c) { return c == CUBLAS_COMPUTE_32I || c == CUBLAS_COMPUTE_32I_PEDANTIC; }
bool has_bias(uint32_t epilogue) { return epilogue == CUBLASLT_EPILOGUE_BIAS || epilogue == CUBLASLT_EPILOGUE_GELU_BIAS; }
bool has_gelu(uint32_t epilogue) { return epilogue == CUBLASLT_EPILOGUE_GELU || epilogue == CUBLASLT_EPILOGUE_GELU_BIAS; }

// One multiplication, checked and resolved to its sizes: D (m×n) = op(A) (m×k) · op(B) (k×n).
struct Problem {
  int64_t m = 0, n = 0, k = 0;
  bool integer = false;
  cudaDataType_t ab_type = CUDA_R_32F, d_type = CUDA_R_32F;
};

bool is_multiple_of_4(uint64_t v) { return v % 4 == 0; }

// Everything that can be decided without the data pointers; the heuristic and the matmul agree on
// it. INVALID_VALUE for inconsistent shapes, NOT_SUPPORTED for what this fake does not model.
cublasStatus_t resolve(const MatmulDesc& desc, const Layout& a, const Layout& b, const Layout& c, const Layout& d,
                       Problem* out) {
  for (const Layout* l : {&a, &b, &c, &d})
    if (l->ld < 0 || static_cast<uint64_t>(l->ld) < l->rows || (l->rows > 0 && l->ld == 0))
      return CUBLAS_STATUS_INVALID_VALUE;  // column-major: ld at least the column's length
  Problem p;
  p.m = static_cast<int64_t>(d.rows);
  p.n = static_cast<int64_t>(d.cols);
  if (c.rows != d.rows || c.cols != d.cols) return CUBLAS_STATUS_INVALID_VALUE;
  const bool ta = desc.transa == CUBLAS_OP_T, tb = desc.transb == CUBLAS_OP_T;
  const uint64_t a_m = ta ? a.cols : a.rows, a_k = ta ? a.rows : a.cols;
  const uint64_t b_k = tb ? b.cols : b.rows, b_n = tb ? b.rows : b.cols;
  if (a_m != d.rows || b_n != d.cols || a_k != b_k) return CUBLAS_STATUS_INVALID_VALUE;
  p.k = static_cast<int64_t>(a_k);
  if (a.type != b.type || c.type != d.type) return CUBLAS_STATUS_NOT_SUPPORTED;
  p.ab_type = a.type;
  p.d_type = d.type;

  p.integer = integer_compute(desc.compute);
  if (p.integer) {
    if (desc.scale != CUDA_R_32I || a.type != CUDA_R_8I || d.type != CUDA_R_32I) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (desc.epilogue != CUBLASLT_EPILOGUE_DEFAULT) return CUBLAS_STATUS_NOT_SUPPORTED;
    // cuBLASLt's int8 kernels in the regular (COL) order: TN, m and k multiples of 4, and every
    // leading dimension a multiple of 4. Held to here so the emulated backend meets the same bar.
    if (!ta || tb) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (!is_multiple_of_4(d.rows) || !is_multiple_of_4(a_k)) return CUBLAS_STATUS_NOT_SUPPORTED;
    for (const Layout* l : {&a, &b, &c, &d})
      if (!is_multiple_of_4(static_cast<uint64_t>(l->ld))) return CUBLAS_STATUS_NOT_SUPPORTED;
  } else {
    const bool fp32_compute = desc.compute == CUBLAS_COMPUTE_32F || desc.compute == CUBLAS_COMPUTE_32F_PEDANTIC;
    const bool tf32_compute = desc.compute == CUBLAS_COMPUTE_32F_FAST_TF32;
    if ((!fp32_compute && !tf32_compute) || desc.scale != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
    const bool f32_f32 = a.type == CUDA_R_32F && d.type == CUDA_R_32F;
    const bool f16_f16 = a.type == CUDA_R_16F && d.type == CUDA_R_16F;
    const bool f16_f32 = a.type == CUDA_R_16F && d.type == CUDA_R_32F;
    if (tf32_compute ? !f32_f32 : !(f32_f32 || f16_f16 || f16_f32)) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (has_bias(desc.epilogue) && desc.bias_type != -1 && desc.bias_type != static_cast<int32_t>(d.type))
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  *out = p;
  return CUBLAS_STATUS_SUCCESS;
}

float load_float(cudaDataType_t type, const void* base, int64_t index) {
  if (type == CUDA_R_16F) return encrt::half_to_float(static_cast<const uint16_t*>(base)[index]);
  return static_cast<const float*>(base)[index];
}

// double -> float rounding to odd (the neighbour with an odd last bit when inexact), so that the
// float's following round to nearest even into fp16 is the correctly rounded fp16 of the double:
// float's 24 bits are at least 2·11 + 2, the condition for round-to-odd to avoid double rounding.
float round_to_odd_float(double v) {
  float f = static_cast<float>(v);
  if (!std::isfinite(f) || static_cast<double>(f) == v) return f;
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 1u) == 0)
    f = std::nextafter(f, v > static_cast<double>(f) ? std::numeric_limits<float>::infinity()
                                                     : -std::numeric_limits<float>::infinity());
  return f;
}

void store_float(cudaDataType_t type, void* base, int64_t index, double v) {
  if (type == CUDA_R_16F)
    static_cast<uint16_t*>(base)[index] = encrt::float_to_half(round_to_odd_float(v));
  else
    static_cast<float*>(base)[index] = static_cast<float>(v);
}

double gelu_tanh(double x) {
  const double kSqrt2OverPi = 0.79788456080286535588;  // sqrt(2 / pi)
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

// Element (row, col) of a column-major matrix.
int64_t at(const Layout& l, int64_t row, int64_t col) { return row + col * l.ld; }

struct Operands {
  const void* alpha;
  const void* A;
  const void* B;
  const void* beta;
  const void* C;
  void* D;
};

void matmul_float(const MatmulDesc& desc, const Problem& p, const Layout& a, const Layout& b, const Layout& c,
                  const Layout& d, const Operands& o) {
  float alpha_f, beta_f;
  std::memcpy(&alpha_f, o.alpha, sizeof alpha_f);
  std::memcpy(&beta_f, o.beta, sizeof beta_f);
  const double alpha = alpha_f, beta = beta_f;
  const bool ta = desc.transa == CUBLAS_OP_T, tb = desc.transb == CUBLAS_OP_T;
  // op(A) as m rows of k and op(B) as n rows of k, contiguous: the dot products then run over
  // adjacent values, and D may overlap A or B without reading what it already wrote.
  std::vector<float> op_a, op_b;
  if (alpha != 0.0) {
    op_a.resize(static_cast<size_t>(p.m * p.k));
    op_b.resize(static_cast<size_t>(p.n * p.k));
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t q = 0; q < p.k; ++q)
        op_a[static_cast<size_t>(i * p.k + q)] = load_float(a.type, o.A, ta ? at(a, q, i) : at(a, i, q));
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t q = 0; q < p.k; ++q)
        op_b[static_cast<size_t>(j * p.k + q)] = load_float(b.type, o.B, tb ? at(b, j, q) : at(b, q, j));
  }
  const bool bias = has_bias(desc.epilogue), gelu = has_gelu(desc.epilogue);
  for (int64_t j = 0; j < p.n; ++j) {
    for (int64_t i = 0; i < p.m; ++i) {
      double v = 0.0;
      if (alpha != 0.0) {
        const float* ra = op_a.data() + i * p.k;
        const float* rb = op_b.data() + j * p.k;
        double acc = 0.0;
        for (int64_t q = 0; q < p.k; ++q) acc += static_cast<double>(ra[q]) * static_cast<double>(rb[q]);
        v = alpha * acc;
      }
      // C and D share a position's element only: reading C(i, j) before writing D(i, j) is in-place safe.
      if (beta != 0.0) v += beta * static_cast<double>(load_float(c.type, o.C, at(c, i, j)));
      if (bias) v += static_cast<double>(load_float(p.d_type, desc.bias, i));
      if (gelu) v = gelu_tanh(v);
      store_float(d.type, o.D, at(d, i, j), v);
    }
  }
}

void matmul_int8(const Problem& p, const Layout& a, const Layout& b, const Layout& c, const Layout& d,
                 const Operands& o) {
  int32_t alpha_i, beta_i;
  std::memcpy(&alpha_i, o.alpha, sizeof alpha_i);
  std::memcpy(&beta_i, o.beta, sizeof beta_i);
  // int32 arithmetic that wraps as the hardware's accumulator does, done in uint32_t so that an
  // overflow is defined (two's complement) rather than undefined behaviour.
  const uint32_t alpha = static_cast<uint32_t>(alpha_i), beta = static_cast<uint32_t>(beta_i);
  // TN (resolve() refuses the rest): column i of A and column j of B are op(A)'s row i and op(B)'s
  // column j, already k contiguous values; copied so that D may overlap them.
  std::vector<int8_t> op_a, op_b;
  if (alpha != 0) {
    op_a.resize(static_cast<size_t>(p.m * p.k));
    op_b.resize(static_cast<size_t>(p.n * p.k));
    const int8_t* A = static_cast<const int8_t*>(o.A);
    const int8_t* B = static_cast<const int8_t*>(o.B);
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t q = 0; q < p.k; ++q) op_a[static_cast<size_t>(i * p.k + q)] = A[at(a, q, i)];
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t q = 0; q < p.k; ++q) op_b[static_cast<size_t>(j * p.k + q)] = B[at(b, q, j)];
  }
  const int32_t* C = static_cast<const int32_t*>(o.C);
  int32_t* D = static_cast<int32_t*>(o.D);
  for (int64_t j = 0; j < p.n; ++j) {
    for (int64_t i = 0; i < p.m; ++i) {
      uint32_t v = 0;
      if (alpha != 0) {
        const int8_t* ra = op_a.data() + i * p.k;
        const int8_t* rb = op_b.data() + j * p.k;
        uint32_t acc = 0;
        for (int64_t q = 0; q < p.k; ++q) acc += static_cast<uint32_t>(int32_t{ra[q]} * int32_t{rb[q]});
        v = alpha * acc;
      }
      if (beta != 0) v += beta * static_cast<uint32_t>(C[at(c, i, j)]);
      D[at(d, i, j)] = static_cast<int32_t>(v);  // modular conversion (C++20 defines it; GCC and Clang always have)
    }
  }
}

bool aligned_4(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 4 == 0; }

// One checked multiplication with everything it reads copied (descriptors, layouts, alpha and
// beta), so that it can run later than the call: at each replay of a captured graph.
struct Work {
  MatmulDesc desc;
  Problem p;
  Layout a, b, c, d;
  uint32_t alpha_bits, beta_bits;
  const void* A;
  const void* B;
  const void* C;
  void* D;

  static void run(void* self) {
    const Work& w = *static_cast<const Work*>(self);
    const Operands o{&w.alpha_bits, w.A, w.B, &w.beta_bits, w.C, w.D};
    if (w.p.integer)
      matmul_int8(w.p, w.a, w.b, w.c, w.d, o);
    else
      matmul_float(w.desc, w.p, w.a, w.b, w.c, w.d, o);
  }
};

}  // namespace

extern "C" {

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t* lightHandle) {
  if (!lightHandle) return CUBLAS_STATUS_INVALID_VALUE;
  Handle* h = new (std::nothrow) Handle;
  if (!h) return CUBLAS_STATUS_ALLOC_FAILED;
  *lightHandle = reinterpret_cast<cublasLtHandle_t>(h);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t lightHandle) {
  Handle* h = handle_of(lightHandle);
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  h->magic = 0;  // a second destroy, or a use after it, is then refused rather than misread
  delete h;
  return CUBLAS_STATUS_SUCCESS;
}

// The version of the headers the fake was built against (cuBLAS 13.1.0 is 130100): the backend only
// binds it, and anything that reads it sees the API it was compiled for.
size_t CUBLASWINAPI cublasLtGetVersion(void) { return static_cast<size_t>(CUBLAS_VERSION); }

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* matmulDesc, cublasComputeType_t computeType,
                                                     cudaDataType_t scaleType) {
  if (!matmulDesc) return CUBLAS_STATUS_INVALID_VALUE;
  MatmulDesc* d = new (std::nothrow) MatmulDesc;
  if (!d) return CUBLAS_STATUS_ALLOC_FAILED;
  d->compute = computeType;  // an unsupported compute or scale type is refused where it is used
  d->scale = scaleType;
  *matmulDesc = reinterpret_cast<cublasLtMatmulDesc_t>(d);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  if (!matmulDesc) return CUBLAS_STATUS_SUCCESS;
  MatmulDesc* d = desc_of(matmulDesc);
  if (!d) return CUBLAS_STATUS_INVALID_VALUE;
  d->magic = 0;
  delete d;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                           cublasLtMatmulDescAttributes_t attr, const void* buf,
                                                           size_t sizeInBytes) {
  MatmulDesc* d = desc_of(matmulDesc);
  if (!d) return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: {
      int32_t v;
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      d->compute = static_cast<cublasComputeType_t>(v);
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: {
      int32_t v;
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      d->scale = static_cast<cudaDataType_t>(v);
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: {
      int32_t v;
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      // Host and device scalars are both host memory here; the vector modes are not modelled.
      if (v != CUBLASLT_POINTER_MODE_HOST && v != CUBLASLT_POINTER_MODE_DEVICE) return CUBLAS_STATUS_NOT_SUPPORTED;
      d->pointer_mode = v;
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB: {
      int32_t v;
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      if (v != CUBLAS_OP_N && v != CUBLAS_OP_T && v != CUBLAS_OP_C) return CUBLAS_STATUS_INVALID_VALUE;
      if (v == CUBLAS_OP_C) return CUBLAS_STATUS_NOT_SUPPORTED;  // only real types are modelled: use T
      (attr == CUBLASLT_MATMUL_DESC_TRANSA ? d->transa : d->transb) = static_cast<cublasOperation_t>(v);
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_TRANSC: {
      int32_t v;
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      return v == CUBLAS_OP_N ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;  // cuBLASLt takes N only
    }
    case CUBLASLT_MATMUL_DESC_EPILOGUE: {
      uint32_t v;
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      if (v != CUBLASLT_EPILOGUE_DEFAULT && v != CUBLASLT_EPILOGUE_BIAS && v != CUBLASLT_EPILOGUE_GELU &&
          v != CUBLASLT_EPILOGUE_GELU_BIAS)
        return CUBLAS_STATUS_NOT_SUPPORTED;
      d->epilogue = v;
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER: {
      const void* v;
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      d->bias = v;
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: {
      int32_t v;
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      d->bias_type = v;  // checked against D's type where it is used
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: {
      int32_t v;  // a performance hint: harmless on the host
      return read_value(buf, sizeInBytes, &v) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    }
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout, cudaDataType type,
                                                       uint64_t rows, uint64_t cols, int64_t ld) {
  if (!matLayout) return CUBLAS_STATUS_INVALID_VALUE;
  Layout* l = new (std::nothrow) Layout;
  if (!l) return CUBLAS_STATUS_ALLOC_FAILED;
  l->type = type;  // shapes and types are checked against each other where they are used
  l->rows = rows;
  l->cols = cols;
  l->ld = ld;
  *matLayout = reinterpret_cast<cublasLtMatrixLayout_t>(l);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  if (!matLayout) return CUBLAS_STATUS_SUCCESS;
  Layout* l = layout_of(matLayout);
  if (!l) return CUBLAS_STATUS_INVALID_VALUE;
  l->magic = 0;
  delete l;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                             cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                                                             size_t sizeInBytes) {
  Layout* l = layout_of(matLayout);
  if (!l) return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: {
      uint32_t v;
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      l->type = static_cast<cudaDataType_t>(v);
      return CUBLAS_STATUS_SUCCESS;
    }
    case CUBLASLT_MATRIX_LAYOUT_ORDER: {
      int32_t v;
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      return v == CUBLASLT_ORDER_COL ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    }
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      return read_value(buf, sizeInBytes, &l->rows) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      return read_value(buf, sizeInBytes, &l->cols) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATRIX_LAYOUT_LD:
      return read_value(buf, sizeInBytes, &l->ld) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: {
      int32_t v;  // a batch of one is the only one modelled
      if (!read_value(buf, sizeInBytes, &v)) return CUBLAS_STATUS_INVALID_VALUE;
      return v == 1 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    }
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: {
      int64_t v;  // unused by a batch of one
      return read_value(buf, sizeInBytes, &v) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    }
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
  Preference* p = new (std::nothrow) Preference;
  if (!p) return CUBLAS_STATUS_ALLOC_FAILED;
  *pref = reinterpret_cast<cublasLtMatmulPreference_t>(p);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  if (!pref) return CUBLAS_STATUS_SUCCESS;
  Preference* p = preference_of(pref);
  if (!p) return CUBLAS_STATUS_INVALID_VALUE;
  p->magic = 0;
  delete p;
  return CUBLAS_STATUS_SUCCESS;
}

// Preferences only narrow the heuristic's choice among algorithms; the fake's single algorithm needs
// no workspace and no alignment beyond int8's 4 bytes, so each is checked for size and accepted.
cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                                 cublasLtMatmulPreferenceAttributes_t attr,
                                                                 const void* buf, size_t sizeInBytes) {
  Preference* p = preference_of(pref);
  if (!p) return CUBLAS_STATUS_INVALID_VALUE;
  bool ok = false;
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      ok = read_value(buf, sizeInBytes, &p->max_workspace_bytes);
      break;
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE:
    case CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: {
      uint32_t v;
      ok = read_value(buf, sizeInBytes, &v);
      break;
    }
    case CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT: {
      float v;
      ok = read_value(buf, sizeInBytes, &v);
      break;
    }
    case CUBLASLT_MATMUL_PREF_IMPL_MASK: {
      uint64_t v;
      ok = read_value(buf, sizeInBytes, &v);
      break;
    }
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t lightHandle,
                                                           cublasLtMatmulDesc_t operationDesc,
                                                           cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                                           cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                                           cublasLtMatmulPreference_t preference,
                                                           int requestedAlgoCount,
                                                           cublasLtMatmulHeuristicResult_t heuristicResultsArray[],
                                                           int* returnAlgoCount) {
  if (!handle_of(lightHandle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (returnAlgoCount) *returnAlgoCount = 0;
  const MatmulDesc* desc = desc_of(operationDesc);
  const Layout *a = layout_of(Adesc), *b = layout_of(Bdesc), *c = layout_of(Cdesc), *d = layout_of(Ddesc);
  if (!desc || !a || !b || !c || !d || (preference && !preference_of(preference)) || requestedAlgoCount <= 0 ||
      !heuristicResultsArray || !returnAlgoCount)
    return CUBLAS_STATUS_INVALID_VALUE;
  Problem problem;
  if (cublasStatus_t s = resolve(*desc, *a, *b, *c, *d, &problem); s != CUBLAS_STATUS_SUCCESS) return s;
  cublasLtMatmulHeuristicResult_t& r = heuristicResultsArray[0];
  std::memset(&r, 0, sizeof r);
  r.algo.data[0] = kAlgoTag;
  r.workspaceSize = 0;
  r.state = CUBLAS_STATUS_SUCCESS;
  r.wavesCount = 1.0f;
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                           const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc,
                                           const void* B, cublasLtMatrixLayout_t Bdesc, const void* beta,
                                           const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
                                           cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo,
                                           void* workspace, size_t workspaceSizeInBytes, cudaStream_t stream) {
  (void)workspace;             // the host algorithm needs none
  (void)workspaceSizeInBytes;  // (it asks for 0 bytes, which any size satisfies)
  if (!handle_of(lightHandle)) return CUBLAS_STATUS_NOT_INITIALIZED;
  const MatmulDesc* desc = desc_of(computeDesc);
  const Layout *a = layout_of(Adesc), *b = layout_of(Bdesc), *c = layout_of(Cdesc), *d = layout_of(Ddesc);
  if (!desc || !a || !b || !c || !d || !alpha || !beta) return CUBLAS_STATUS_INVALID_VALUE;
  if (algo && algo->data[0] != kAlgoTag) return CUBLAS_STATUS_INVALID_VALUE;  // not one this library handed out
  Problem p;
  if (cublasStatus_t s = resolve(*desc, *a, *b, *c, *d, &p); s != CUBLAS_STATUS_SUCCESS) return s;
  if (p.m == 0 || p.n == 0) return CUBLAS_STATUS_SUCCESS;

  // Scalars are 4 bytes in either scale type; zero tests decide what is read (BLAS convention).
  uint32_t alpha_bits, beta_bits;
  std::memcpy(&alpha_bits, alpha, sizeof alpha_bits);
  std::memcpy(&beta_bits, beta, sizeof beta_bits);
  float alpha_f, beta_f;
  std::memcpy(&alpha_f, &alpha_bits, sizeof alpha_f);
  std::memcpy(&beta_f, &beta_bits, sizeof beta_f);
  const bool alpha_zero = p.integer ? alpha_bits == 0 : alpha_f == 0.0f;
  const bool beta_zero = p.integer ? beta_bits == 0 : beta_f == 0.0f;
  if (!D || (!alpha_zero && p.k > 0 && (!A || !B)) || (!beta_zero && !C)) return CUBLAS_STATUS_INVALID_VALUE;
  if (has_bias(desc->epilogue) && !desc->bias) return CUBLAS_STATUS_INVALID_VALUE;
  // In place only element for element: C == D with different leading dimensions would overwrite C
  // before it is read (cuBLASLt requires Cdesc to match Ddesc then).
  if (C == D && !beta_zero && c->ld != d->ld) return CUBLAS_STATUS_INVALID_VALUE;
  if (p.integer && !(aligned_4(A) && aligned_4(B) && aligned_4(C) && aligned_4(D)))
    return CUBLAS_STATUS_NOT_SUPPORTED;  // the int8 kernels' 4-byte alignment

  try {
    auto work = std::make_unique<Work>(Work{*desc, p, *a, *b, *c, *d, alpha_bits, beta_bits, A, B, C, D});
    // A stream being captured into a CUDA graph (the emulated runtime's, emulated_cuda_runtime.cpp)
    // records the multiplication as a host function that each replay runs, with the operands'
    // values then, as a captured cuBLASLt kernel would; the graph keeps the work for the process's
    // life. Otherwise it runs now: the emulated streams run their work at once.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing && cudaLaunchHostFunc && cudaStreamIsCapturing(stream, &capture) == cudaSuccess &&
        capture == cudaStreamCaptureStatusActive) {
      if (cudaLaunchHostFunc(stream, &Work::run, work.get()) != cudaSuccess) return CUBLAS_STATUS_EXECUTION_FAILED;
      static std::mutex mutex;
      static std::vector<std::unique_ptr<Work>> captured;
      std::lock_guard<std::mutex> lock(mutex);
      captured.push_back(std::move(work));
      return CUBLAS_STATUS_SUCCESS;
    }
    Work::run(work.get());
  } catch (const std::bad_alloc&) {
    return CUBLAS_STATUS_ALLOC_FAILED;  // the packed copies of op(A) and op(B)
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
