// libFuzzer target: the Gavel-style throughput matrix (JSON) that the gavel reader and
// the physics model load.
#include "world/physics/throughput_matrix.hpp"
#include "tests/fuzz/fuzz_input.hpp"

using namespace schedsim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_input_errors_only([&] { (void)ThroughputMatrix::parse(text, "fuzz.json"); });
  return 0;
}
