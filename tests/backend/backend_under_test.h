// The backend this run of the conformance suite holds to the reference (the CPU backend with
// isa=scalar), chosen on the command line (`--backend NAME`, see conformance_main.cpp), and the
// error each backend is allowed, per op and dtype.
#pragma once

#include <string>

#include "backend/backend.h"
#include "session/session_impl.h"

namespace encrt::conformance {

struct BackendUnderTest {
  std::string label;     // as given: "cpu", "cpu:avx2", "xnnpack", "mock_device", ...
  std::string backend;   // the session backend name
  backend::Options options;
  const backend::BackendInterface* table = nullptr;
};

const BackendUnderTest& backend_under_test();
void set_backend_under_test(BackendUnderTest b);

// The reference: the CPU backend with the scalar kernels.
const backend::Options& reference_options();
// The reference's options for comparing with session `under_test`: reference_options(), with the
// model's int8 linears run as fp16 ones too where under_test runs them so (its backend's option
// int8_linears: model/dequantized_linears.h), so that both compute the same thing.
backend::Options reference_options_for(const detail::SessionImpl& under_test);

// The largest normalized error allowed for one op's fp32 output against the reference:
// max |got - ref| over the finite outputs, divided by the RMS of the reference output (0: bit
// for bit). `weights` is the dtype of a linear's weights (kF32 for other ops).
double op_tolerance(const BackendUnderTest& b, plan::OpKind kind, DType weights, bool int8_attention);

// The same for a whole encoder's last hidden state and pooled output, by weight dtype.
double model_tolerance(const BackendUnderTest& b, DType weights);

}  // namespace encrt::conformance
