// CPU features on 32-bit ARM (toolchains/armv7-linux-gnueabihf.cmake): the HWCAP bits of the
// 32-bit ABI are read (NEON and VFPv4, which that build is compiled for), and none of them turns
// into an AArch64 feature: the kernel tables hold the reference kernels, the best level is
// "scalar", and a forced AArch64 level is refused. Elsewhere the 32-bit fields stay false.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "encrt/encrt.hpp"
#include "kernels/cpu_features.h"
#include "kernels/isa.h"
#include "kernels/kernel_table.h"
#include "support/fixtures.h"

using namespace encrt::kernels;

TEST_CASE("cpu features: 32-bit ARM reads its own HWCAP bits and claims no AArch64 feature", "[isa][arm32]") {
  const CpuFeatures& f = cpu_features();
#if defined(__arm__) && defined(__linux__)
  // What the armv7 toolchain compiles for: a CPU without it would run NEON code it cannot execute.
  CHECK(f.arm32_neon);
  CHECK(f.arm32_vfpv4);
  CHECK_FALSE(f.neon);
  CHECK_FALSE(f.neon_dotprod);
  CHECK_FALSE(f.neon_fp16);
  CHECK_FALSE(f.neon_i8mm);
  CHECK(cpu_isa_features() == 0);
  CHECK(std::string(best_isa_level().name) == "scalar");
  CHECK(std::string(default_kernel_table().gemm_u8s8_name) == "ref::gemm_u8s8");
  CHECK(std::string(default_kernel_table().gemm_f32_name) == "ref::gemm_f32");
  for (const char* level : {"neon", "neondot", "neonfp16", "neoni8mm", "avx2"}) {
    INFO(level);
    CHECK_FALSE(isa_supported(find_isa_level(level)->features));
  }
  // Through the public API: a session asked for level neon is refused with the reason.
  std::unique_ptr<encrt::Model> model;
  const encrt::test::Fixture fixture = encrt::test::load_fixture("bert_plain");
  REQUIRE(encrt::Model::load(encrt::test::convert_fixture(fixture, encrt::converter::WeightType::kF32, "", "arm32"),
                             &model));
  encrt::SessionOptions opt;
  opt.max_seq = 8;
  opt.backend = "cpu";
  opt.backend_options["isa"] = "neon";
  std::unique_ptr<encrt::Session> session;
  const encrt::Status s = encrt::Session::create(*model, opt, &session);
  CHECK(s.code() == encrt::StatusCode::kUnsupported);
  CHECK(s.message().find("does not support ISA level 'neon' (best: scalar)") != std::string::npos);
#else
  CHECK_FALSE(f.arm32_neon);
  CHECK_FALSE(f.arm32_vfpv4);
  CHECK_FALSE(f.arm32_idiv);
#endif
}
