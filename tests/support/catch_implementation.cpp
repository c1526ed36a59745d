// Catch2's implementation, compiled once into the encrt_catch library that every test executable
// links (CATCH_CONFIG_RUNNER: the implementation without a main; each executable has its own main,
// tests/test_main.cpp or the conformance suite's, and calls run_catch_session).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "support/catch_session.h"

namespace encrt::test {
int run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }
}  // namespace encrt::test
