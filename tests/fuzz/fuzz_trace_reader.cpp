// libFuzzer target: one trace format's reader, named by SCHEDSIM_FUZZ_FORMAT (a format
// of `schedsim trace formats`, or "auto" for format detection followed by the detected
// reader; default "auto"). Every job a reader returns must satisfy what docs/traces.md
// promises (submit >= 0, duration > 0 and finite, 1 <= GPUs, share in 1..1000); a reader
// may otherwise only throw InputError. Strict and lenient (skip bad rows) modes both run.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "tests/fuzz/fuzz_input.hpp"
#include "traces/trace_reader.hpp"

using namespace schedsim;

namespace {

std::string g_format = "auto";
TraceOptions g_options;

void check_job(const JobSpec& j) {
  const bool ok = j.submit.us() >= 0 && std::isfinite(j.duration_s) && j.duration_s > 0 && j.num_gpus >= 1 && j.gpu_milli >= 1 &&
                  j.gpu_milli <= 1000 && (std::isnan(j.estimate_s) || std::isfinite(j.estimate_s)) && !j.id.empty();
  if (!ok) {
    std::fprintf(stderr, "fuzz: reader returned an invalid job '%s' (submit %lld us, duration %g s, %d GPUs, milli %d)\n", j.id.c_str(),
                 static_cast<long long>(j.submit.us()), j.duration_s, j.num_gpus, j.gpu_milli);
    std::abort();
  }
}

void read_all(const std::string& path, BadRowMode mode) {
  fuzz::expect_input_errors_only([&] {
    const std::string format = g_format == "auto" ? detect_trace_format(path) : g_format;
    TraceOptions o = g_options;
    o.on_bad_row = mode;
    auto reader = open_trace_reader(path, format, o);
    JobSpec job;
    for (int n = 0; n < 1'000'000 && reader->next(job); ++n) check_job(job);
  });
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  if (const char* f = std::getenv("SCHEDSIM_FUZZ_FORMAT")) g_format = f;
  if (g_format == "gavel") {
    // A small throughput matrix with the job types of the seed corpus.
    const std::string m = R"J({"v100": {"('ResNet-18 (batch size 64)', 1)": {"null": 20.0}, "('LM (batch size 5)', 1)": {"null": 40.0}},
 "k80": {"('ResNet-18 (batch size 64)', 1)": {"null": 5.0}, "('LM (batch size 5)', 1)": {"null": 10.0}}})J";
    g_options.throughputs_path = fuzz::scratch_path("throughputs.json");
    std::FILE* f = std::fopen(g_options.throughputs_path.c_str(), "wb");
    if (!f || std::fwrite(m.data(), 1, m.size(), f) != m.size() || std::fclose(f) != 0) std::abort();
  }
  if (g_format == "csv") {
    CsvMapping mapping;
    mapping.columns = {{"job_id", "id"}, {"submit_time", "submit"}, {"duration", "runtime"}, {"num_gpus", "gpus"},
                       {"user", "user"}, {"gpu_milli", "milli"}, {"status", "state"}};
    mapping.time_unit_s = 60.0;
    g_options.mapping = mapping;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string& path = fuzz::write_input(g_format == "swf" ? "trace.swf" : "trace", data, size);
  read_all(path, BadRowMode::kError);
  read_all(path, BadRowMode::kSkip);
  return 0;
}
