#pragma once
// Runs Catch2's test session with these command-line arguments and returns its exit code. Catch2's
// implementation, Catch::Session included, is compiled once in support/catch_implementation.cpp, so
// that the mains (tests/test_main.cpp, the conformance suite's) do not compile it again.
namespace encrt::test {
int run_catch_session(int argc, char** argv);
}  // namespace encrt::test
