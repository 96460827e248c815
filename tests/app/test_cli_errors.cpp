// The CLI's messages (docs/errors.md): every class of error with its prefix and exit
// status, the top-level safety net for library exceptions, the did-you-mean suggestions,
// and user text with control characters escaped in messages and terminal tables.
// tests/cli/errors.sh runs the binary for the command-line side.
#include <catch2/catch.hpp>

#include <filesystem>
#include <new>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "app/compare.hpp"
#include "app/error_report.hpp"
#include "sim/interrupt.hpp"
#include "app/trace_inspect.hpp"
#include "policies/registry.hpp"
#include "base/error.hpp"
#include "base/text_checks.hpp"

using namespace schedsim;

namespace {

template <typename E>
ErrorReport report(const E& e, const std::string& phase = "loading the scenario") {
  return report_error(std::make_exception_ptr(e), phase);
}

}  // namespace

TEST_CASE("terminal_safe escapes control characters and keeps ordinary text", "[cli][errors]") {
  CHECK(terminal_safe("jobs.csv:3: duration_s: must be > 0, got '-3'") == "jobs.csv:3: duration_s: must be > 0, got '-3'");
  CHECK(terminal_safe("Carbon Intensity gCO\xe2\x82\x82" "eq/kWh, caf\xc3\xa9") == "Carbon Intensity gCO\xe2\x82\x82" "eq/kWh, caf\xc3\xa9");
  CHECK(terminal_safe("C:\\new\\x1b") == "C:\\new\\x1b");  // backslashes are kept
  CHECK(terminal_safe("a\x1b[2Jb") == "a\\x1b[2Jb");
  CHECK(terminal_safe("line\r\nnext\tcol") == "line\\r\\nnext\\tcol");
  CHECK(terminal_safe(std::string("nul\0here", 8)) == "nul\\x00here");
  CHECK(terminal_safe("bell\x07 del\x7f") == "bell\\x07 del\\x7f");
  CHECK(terminal_safe("csi\xc2\x9b" "31m nel\xc2\x85") == "csi\\u009b31m nel\\u0085");  // C1 controls
  CHECK(terminal_safe("\xc2\xa0nbsp") == "\xc2\xa0nbsp");                             // U+00A0 is not a control
  CHECK(terminal_safe("latin1 \xe9t\xe9 \xff") == "latin1 \\xe9t\\xe9 \\xff");      // not UTF-8
  CHECK(terminal_safe("cut \xe2\x82") == "cut \\xe2\\x82");
  const std::string nasty = "\x1b]0;title\x07\r\n\xc2\x9b\xff";
  CHECK(terminal_safe(terminal_safe(nasty)) == terminal_safe(nasty));  // idempotent
}

TEST_CASE("terminal_safe escapes bidirectional and invisible format characters", "[cli][errors]") {
  // A right-to-left override shows "job-gnp.exe" as "job-exe.png"; isolates, marks and a
  // zero-width no-break space hide or reorder text just as well.
  CHECK(terminal_safe("job-\xe2\x80\xaegnp.exe") == "job-\\u202egnp.exe");
  CHECK(terminal_safe("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae") == "\\u202a\\u202b\\u202c\\u202d\\u202e");
  CHECK(terminal_safe("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9") == "\\u2066\\u2067\\u2068\\u2069");
  CHECK(terminal_safe("lrm\xe2\x80\x8e rlm\xe2\x80\x8f alm\xd8\x9c") == "lrm\\u200e rlm\\u200f alm\\u061c");
  CHECK(terminal_safe("zw\xef\xbb\xbfnbsp \xef\xbb\xbf") == "zw\\ufeffnbsp \\ufeff");
  // Their neighbours stay: U+200D (zero-width joiner, in emoji), U+2029, U+2070, Arabic
  // letters (U+0627), U+FEFE.
  const std::string kept = "\xe2\x80\x8d \xe2\x80\xa9 \xe2\x81\xb0 \xd8\xa7 \xef\xbb\xbe";
  CHECK(terminal_safe(kept) == kept);
  const std::string nasty = "a\xe2\x80\xae" "b\xe2\x81\xa9\xef\xbb\xbf\x1b";
  CHECK(terminal_safe(nasty) == "a\\u202eb\\u2069\\ufeff\\x1b");
  CHECK(terminal_safe(terminal_safe(nasty)) == terminal_safe(nasty));  // idempotent
  CHECK(std::string(InputError("jobs.csv:2", "job 'x\xe2\x80\xaey': bad").what()) == "jobs.csv:2: job 'x\\u202ey': bad");
}

TEST_CASE("error messages holding user text are terminal-safe", "[cli][errors]") {
  CHECK(std::string(InputError("jobs.csv:3", "job 'a\x1b[2J': asks for 16 GPUs").what()) == "jobs.csv:3: job 'a\\x1b[2J': asks for 16 GPUs");
  CHECK(std::string(InputError("x\ny.yaml: cannot open").what()) == "x\\ny.yaml: cannot open");
  CHECK(std::string(PolicyError("policy 'p': job 'j\r' is unknown").what()) == "policy 'p': job 'j\\r' is unknown");
  const UsageError u("--seed", "expected a whole number, got 'a\x1b'", "run 'schedsim run --help' for the options");
  CHECK(std::string(u.what()) == "--seed: expected a whole number, got 'a\\x1b'");
  CHECK(std::string(UsageError("", "unknown command 'rnu'", "").what()) == "unknown command 'rnu'");
}

TEST_CASE("each class of error has its prefix and exit status", "[cli][errors]") {
  ErrorReport r = report(InputError("run.yaml:4", "unknown key 'sed'"));
  CHECK(r.text == "schedsim: error: run.yaml:4: unknown key 'sed'\n");
  CHECK(r.status == 1);
  CHECK(r.status == exit_status::kInputError);

  r = report(UsageError("--seed", "expected a whole number from 0 to 18446744073709551615, got 'abc'", "run 'schedsim run --help' for the options"));
  CHECK(r.text ==
        "schedsim: error: --seed: expected a whole number from 0 to 18446744073709551615, got 'abc'\n"
        "schedsim: hint: run 'schedsim run --help' for the options\n");
  CHECK(r.status == 2);

  r = report(PolicyError("policy 'x' left 3 jobs waiting"));
  CHECK(r.text == "schedsim: policy error: policy 'x' left 3 jobs waiting\n");
  CHECK(r.status == 1);

  // Internal errors span lines on purpose (the last events); each line is escaped.
  r = report(InvariantError("device 3 double-booked\nthe last 2 events, oldest first:\n  start job 'a\x1b'\n  start job 'b'"));
  CHECK(r.text ==
        "schedsim: internal error (please report it): device 3 double-booked\nthe last 2 events, oldest first:\n  start job 'a\\x1b'\n  start job 'b'\n");
  CHECK(r.status == 3);

  r = report(Interrupted(2, "interrupted by SIGINT (Ctrl-C) at simulated time 8 s"));
  CHECK(r.text == "schedsim: interrupted by SIGINT (Ctrl-C) at simulated time 8 s\n");
  CHECK(r.status == 130);
  CHECK(report(Interrupted(15, "interrupted by SIGTERM")).status == 143);
}

TEST_CASE("library exceptions reaching main are translated, never shown raw", "[cli][errors]") {
  ErrorReport r = report(std::bad_alloc(), "running the simulation");
  CHECK(r.text ==
        "schedsim: error: out of memory while running the simulation: the scenario needs more memory than this machine has; try fewer jobs, "
        "a smaller cluster or a part of the trace (schedsim trace sample)\n");
  CHECK(r.status == 1);

  r = report(std::filesystem::filesystem_error("cannot create directories", "out/run", std::make_error_code(std::errc::permission_denied)));
  CHECK(r.text == "schedsim: error: out/run: cannot create directories: Permission denied\n");
  CHECK(r.status == 1);
  r = report(std::filesystem::filesystem_error("cannot rename", "a.tmp", "a", std::make_error_code(std::errc::no_space_on_device)));
  CHECK(r.text == "schedsim: error: a.tmp -> a: cannot rename: No space left on device\n");

  try {
    (void)nlohmann::json::parse("{\"a\": 1}").at("b");
    FAIL("no exception");
  } catch (const nlohmann::json::exception&) {
    r = report_error(std::current_exception(), "reading the sweep grid");
  }
  CHECK(r.text == "schedsim: error: while reading the sweep grid: unexpected JSON: key 'b' not found\n");
  CHECK(r.status == 1);

  try {
    (void)std::stoul("x");
    FAIL("no exception");
  } catch (const std::invalid_argument&) {
    r = report_error(std::current_exception(), "loading the scenario");
  }
  CHECK(r.text ==
        "schedsim: error: while loading the scenario: a number in the input is malformed or out of range (std::stoul); please report which input "
        "led here\n");
  try {
    (void)std::stoi("99999999999999999999");
    FAIL("no exception");
  } catch (const std::out_of_range&) {
    r = report_error(std::current_exception(), "loading the scenario");
  }
  CHECK(r.text ==
        "schedsim: error: while loading the scenario: a number in the input is malformed or out of range (std::stoi); please report which input "
        "led here\n");

  r = report(std::runtime_error("something \x1b[2J odd"));
  CHECK(r.text == "schedsim: error: something \\x1b[2J odd\n");
  CHECK(r.status == 1);
  r = report(42, "writing the results");
  CHECK(r.text == "schedsim: internal error (please report it): an exception of unknown type while writing the results\n");
  CHECK(r.status == 3);
}

TEST_CASE("did-you-mean: near misses only, a dropped letter first", "[cli][errors]") {
  CHECK(closest_match("--sed", {"--set", "--seed", "--out"}) == "--seed");
  CHECK(closest_match("--st", {"--set", "--seed"}) == "--set");
  CHECK(closest_match("sjff", {"fifo", "sjf", "srtf"}) == "sjf");
  CHECK(closest_match("lottery", {"fifo", "sjf", "srtf"}).empty());
  CHECK(did_you_mean("inpsect", {"inspect", "convert"}) == " (did you mean 'inspect'?)");
  CHECK(did_you_mean("zzz", {"inspect", "convert"}).empty());

  const PolicyRegistry registry = builtin_policies();
  CHECK(registry.suggest_policy("fifoo") == " (did you mean 'fifo'?)");
  CHECK(registry.suggest_policy("lottery").empty());
  CHECK(registry.knows("fifo"));
  CHECK_FALSE(registry.knows("sjff"));
  CHECK(registry.unknown_policy_message("sjff").rfind("unknown policy 'sjff' (did you mean 'sjf'?); registered policies: fifo, sjf, srtf, ", 0) == 0);
  CHECK_THROWS_WITH(registry.create("gittns"), Catch::StartsWith("policy name: unknown policy 'gittns' (did you mean 'gittins'?); registered policies: fifo,"));
}

TEST_CASE("terminal tables escape user text; the CSV keeps it", "[cli][errors]") {
  RunResult plain, nasty;
  plain.policy_name = "fifo";
  nasty.policy_name = "x\x1b[2J";
  const std::string table = comparison_table({plain, nasty}, false);
  CHECK(table.find('\x1b') == std::string::npos);
  CHECK(table.find("\nx\\x1b[2J  ") != std::string::npos);
  CHECK(comparison_table({plain}, false).find("\nfifo    ") != std::string::npos);  // ordinary names as before
  CHECK(comparison_csv({nasty}).find("x\x1b[2J,") != std::string::npos);         // the data file holds the name as it is
  CHECK(summary_table(nasty).find("  policy                    x\\x1b[2J\n") == 0);

  TraceInspection t;
  t.path = "dir/\x1b[31mjobs.csv";
  t.format = "schedsim";
  t.jobs = 1;
  t.warnings = {"jobs.csv:3: job 'a\rb': submit times are not in order"};
  const std::string text = inspection_text(t);
  CHECK(text.rfind("dir/\\x1b[31mjobs.csv (format schedsim)\n", 0) == 0);
  CHECK(text.find("  warning: jobs.csv:3: job 'a\\rb': submit times are not in order\n") != std::string::npos);
  CHECK(inspection_json(t)["path"] == "dir/\x1b[31mjobs.csv");  // JSON escapes it itself
}
