// The Catch2 suites' main. Catch2's implementation is compiled once, in support/catch_implementation.cpp.
#include "support/catch_session.h"

int main(int argc, char** argv) { return encrt::test::run_catch_session(argc, argv); }
