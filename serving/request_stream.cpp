#include "serving/request_stream.hpp"

#include <cmath>
#include <limits>
#include <string_view>

#include "base/error.hpp"
#include "base/rng.hpp"
#include "traces/line_reader.hpp"
#include "traces/time_parse.hpp"

namespace schedsim::serving {

namespace {

constexpr std::string_view kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";
constexpr double kSecondsPerDay = 86400.0;
constexpr double kTwoPi = 6.283185307179586476925286766559;

std::string shown(std::string_view text) {
  constexpr std::size_t kMax = 60;
  if (text.size() <= kMax) return "'" + std::string(text) + "'";
  return "'" + std::string(text.substr(0, kMax)) + "...' (" + std::to_string(text.size()) + " characters)";
}

bool two_digits(std::string_view s, std::size_t at, int& out) {
  if (s[at] < '0' || s[at] > '9' || s[at + 1] < '0' || s[at + 1] > '9') return false;
  out = (s[at] - '0') * 10 + (s[at + 1] - '0');
  return true;
}

// "YYYY-MM-DD HH:MM:SS[.f{1,9}]" as nanoseconds since 1970 (naive: no zone, the trace's
// times are only ever differenced). Integer nanoseconds keep the 100 ns steps of the
// trace exact, which a double of Unix seconds (about 240 ns resolution in 2023) would not.
bool parse_naive_time_ns(std::string_view s, std::int64_t& ns) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':') return false;
  int y = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    y = y * 10 + (s[i] - '0');
  }
  int mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!two_digits(s, 5, mo) || !two_digits(s, 8, d) || !two_digits(s, 11, h) || !two_digits(s, 14, mi) || !two_digits(s, 17, sec))
    return false;
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] + (mo == 2 && leap ? 1 : 0) || h > 23 || mi > 59 || sec > 59) return false;
  std::int64_t frac_ns = 0;
  if (s.size() > 19) {
    if (s[19] != '.' || s.size() == 20 || s.size() > 29) return false;
    std::int64_t scale = 100000000;
    for (std::size_t i = 20; i < s.size(); ++i, scale /= 10) {
      if (s[i] < '0' || s[i] > '9') return false;
      frac_ns += (s[i] - '0') * scale;
    }
  }
  const long long days = days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  ns = ((static_cast<std::int64_t>(days) * 86400 + h * 3600 + mi * 60 + sec) * 1000000000LL) + frac_ns;
  return true;
}

// A decimal count: digits only (no sign, point or exponent), at most 2^31-1. Returns "" or
// what is wrong.
std::string parse_count(std::string_view text, std::int64_t min_value, std::int32_t& out) {
  const std::string allowed = min_value >= 1 ? "a positive integer" : "a non-negative integer";
  if (text.empty()) return "is empty; expected " + allowed;
  std::int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return "expected " + allowed + ", got " + shown(text);
    v = v * 10 + (c - '0');
    if (v > std::numeric_limits<std::int32_t>::max())
      return "is " + shown(text) + "; at most 2147483647 tokens";
  }
  if (v < min_value) return "expected " + allowed + ", got " + shown(text);
  out = static_cast<std::int32_t>(v);
  return "";
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::vector<Request> read_azure_llm_trace(const std::string& path) {
  LineReader reader(path, "trace file");
  std::string line;
  auto where = [&] { return path + ":" + std::to_string(reader.line()); };
  auto strip_cr = [](std::string& l) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
  };
  if (!reader.next(line)) throw InputError(path, "is empty; expected the header '" + std::string(kAzureHeader) + "' (Azure LLM inference trace 2023)");
  strip_cr(line);
  std::string_view header = line;
  if (header.substr(0, 3) == "\xEF\xBB\xBF") header.remove_prefix(3);  // a UTF-8 byte-order mark
  if (header != kAzureHeader)
    throw InputError(where(), "expected the header '" + std::string(kAzureHeader) + "' (Azure LLM inference trace 2023), got " + shown(header));
  std::vector<Request> out;
  std::int64_t first_ns = 0, previous_ns = 0;
  std::string previous_text;
  while (reader.next(line)) {
    strip_cr(line);
    if (trim(line).empty()) continue;
    std::string_view f[3];
    std::size_t fields = 0, start = 0;
    for (std::size_t i = 0; i <= line.size(); ++i) {
      if (i == line.size() || line[i] == ',') {
        if (fields < 3) f[fields] = std::string_view(line).substr(start, i - start);
        ++fields;
        start = i + 1;
      }
    }
    if (fields != 3)
      throw InputError(where(), "expected 3 fields (" + std::string(kAzureHeader) + "), got " + std::to_string(fields));
    const std::string_view time_text = trim(f[0]);
    std::int64_t ns = 0;
    if (!parse_naive_time_ns(time_text, ns))
      throw InputError(where(), "TIMESTAMP: expected a date-time like '2023-11-16 18:15:46.6805900', got " + shown(time_text));
    if (!out.empty() && ns < previous_ns)
      throw InputError(where(), "TIMESTAMP: " + shown(time_text) + " is before the previous row's ('" + previous_text +
                                    "'); the rows must be in time order");
    Request r;
    if (auto e = parse_count(trim(f[1]), 1, r.prompt_tokens); !e.empty()) throw InputError(where(), "ContextTokens: " + e);
    if (auto e = parse_count(trim(f[2]), 0, r.output_tokens); !e.empty()) throw InputError(where(), "GeneratedTokens: " + e);
    if (r.output_tokens == 0)
      throw InputError(where(), "GeneratedTokens: is 0; a request generates at least 1 token (its first token ends the prefill): "
                                "drop the row or write 1");
    if (out.empty()) first_ns = ns;
    r.id = static_cast<std::int64_t>(out.size());
    r.arrival_s = static_cast<double>(ns - first_ns) / 1e9;  // correctly rounded: 4.314579 s reads as 4.314579
    out.push_back(r);
    previous_ns = ns;
    previous_text = std::string(time_text);
  }
  if (out.empty()) throw InputError(path, "has the header but no requests");
  return out;
}

std::vector<Request> rescale_time(std::vector<Request> requests, double duration_s, const DiurnalShape* diurnal) {
  if (!(std::isfinite(duration_s) && duration_s > 0))
    throw InputError("rescale_time", "duration_s must be a finite number > 0, got " + std::to_string(duration_s));
  if (requests.size() < 2 || !(requests.back().arrival_s > requests.front().arrival_s))
    throw InputError("rescale_time", "needs at least two requests with different arrival times, got " + std::to_string(requests.size()) +
                                         " request(s) spanning 0 s");
  if (diurnal && !(diurnal->amplitude >= 0 && diurnal->amplitude < 1))
    throw InputError("rescale_time", "diurnal amplitude must be in [0, 1), got " + std::to_string(diurnal->amplitude));
  if (diurnal && !(diurnal->peak_hour >= 0 && diurnal->peak_hour < 24))
    throw InputError("rescale_time", "diurnal peak_hour must be in [0, 24), got " + std::to_string(diurnal->peak_hour));
  const double t0 = requests.front().arrival_s;
  const double span = requests.back().arrival_s - t0;
  if (!diurnal) {
    // u = 1 exactly for the last request, so it lands on duration_s exactly.
    for (auto& r : requests) r.arrival_s = duration_s * ((r.arrival_s - t0) / span);
    return requests;
  }
  // Cumulative rate (per unit mean rate): R(t) = t + A P/(2 pi) (sin(w t - phi) + sin(phi)),
  // w = 2 pi / P, phi = 2 pi peak_hour / 24; R' = 1 + A cos(w t - phi) >= 1 - A > 0.
  const double a = diurnal->amplitude;
  const double w = kTwoPi / kSecondsPerDay;
  const double phi = kTwoPi * diurnal->peak_hour / 24.0;
  auto cumulative = [&](double t) { return t + a / w * (std::sin(w * t - phi) + std::sin(phi)); };
  auto rate = [&](double t) { return 1.0 + a * std::cos(w * t - phi); };
  const double total = cumulative(duration_s);
  double lo_bound = 0.0;
  for (auto& r : requests) {
    const double u = (r.arrival_s - t0) / span;
    double t;
    if (u <= 0) {
      t = 0.0;
    } else if (u >= 1) {
      t = duration_s;
    } else {
      // Safeguarded Newton on R(t) = u x total within [previous arrival, duration_s]: the
      // bracket keeps the arrivals in order whatever the rounding.
      const double target = u * total;
      double lo = lo_bound, hi = duration_s;
      t = std::min(std::max(u * duration_s, lo), hi);
      for (int it = 0; it < 100; ++it) {
        const double f = cumulative(t) - target;
        if (f > 0) hi = t; else lo = t;
        if (f == 0 || hi - lo <= 1e-12 * duration_s) break;
        double next = t - f / rate(t);
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
        if (next == t) break;
        t = next;
      }
      t = std::min(std::max(t, lo_bound), duration_s);
    }
    r.arrival_s = t;
    lo_bound = t;
  }
  return requests;
}

TokenDistribution TokenDistribution::fixed(std::int32_t tokens) {
  TokenDistribution d;
  d.kind = Kind::kFixed;
  d.tokens = tokens;
  return d;
}

TokenDistribution TokenDistribution::uniform(std::int32_t min_tokens, std::int32_t max_tokens) {
  TokenDistribution d;
  d.kind = Kind::kUniform;
  d.min_tokens = min_tokens;
  d.max_tokens = max_tokens;
  return d;
}

TokenDistribution TokenDistribution::lognormal(double mean_tokens, double sd_tokens) {
  TokenDistribution d;
  d.kind = Kind::kLognormal;
  d.mean_tokens = mean_tokens;
  d.sd_tokens = sd_tokens;
  return d;
}

TokenDistribution TokenDistribution::resample(std::shared_ptr<const std::vector<Request>> trace, std::string trace_path) {
  TokenDistribution d;
  d.kind = Kind::kTrace;
  d.trace = std::move(trace);
  d.trace_path = std::move(trace_path);
  return d;
}

namespace {

void check_distribution(const TokenDistribution& d, const char* field) {
  const std::string where = std::string("synthetic stream: ") + field;
  using K = TokenDistribution::Kind;
  switch (d.kind) {
    case K::kFixed:
      if (d.tokens < 1) throw InputError(where, "fixed tokens must be >= 1, got " + std::to_string(d.tokens));
      break;
    case K::kUniform:
      if (d.min_tokens < 1) throw InputError(where, "uniform min must be >= 1, got " + std::to_string(d.min_tokens));
      if (d.max_tokens < d.min_tokens)
        throw InputError(where, "uniform max (" + std::to_string(d.max_tokens) + ") is below min (" + std::to_string(d.min_tokens) + ")");
      break;
    case K::kLognormal:
      if (!(std::isfinite(d.mean_tokens) && d.mean_tokens >= 1 && d.mean_tokens <= 1e9))
        throw InputError(where, "lognormal mean must be in [1, 1e9] tokens, got " + std::to_string(d.mean_tokens));
      if (!(std::isfinite(d.sd_tokens) && d.sd_tokens >= 0 && d.sd_tokens <= 1e9))
        throw InputError(where, "lognormal sd must be in [0, 1e9] tokens, got " + std::to_string(d.sd_tokens));
      break;
    case K::kTrace:
      if (!d.trace || d.trace->empty()) throw InputError(where, "the trace to resample has no requests");
      break;
  }
}

// Marsaglia and Tsang's gamma sampler (shape k, scale 1); for k < 1 the k + 1 draw times
// U^(1/k).
double gamma_unit(Rng& rng, double k) {
  if (k < 1.0) return gamma_unit(rng, k + 1.0) * std::pow(rng.uniform_open(), 1.0 / k);
  const double d = k - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = rng.normal(0.0, 1.0);
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    const double u = rng.uniform_open();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

std::int32_t draw_tokens(const TokenDistribution& d, Rng& rng, bool output) {
  using K = TokenDistribution::Kind;
  switch (d.kind) {
    case K::kFixed:
      return d.tokens;
    case K::kUniform:
      return d.min_tokens +
             static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(d.max_tokens) - static_cast<std::uint64_t>(d.min_tokens) + 1));
    case K::kLognormal: {
      if (d.sd_tokens == 0) return static_cast<std::int32_t>(std::llround(d.mean_tokens));
      // mean m, sd s: sigma^2 = ln(1 + s^2/m^2), median = m / sqrt(1 + s^2/m^2).
      const double ratio = 1.0 + (d.sd_tokens * d.sd_tokens) / (d.mean_tokens * d.mean_tokens);
      const double x = rng.lognormal(d.mean_tokens / std::sqrt(ratio), std::sqrt(std::log(ratio)));
      const double rounded = std::round(x);
      if (!(rounded >= 1)) return 1;
      if (rounded > std::numeric_limits<std::int32_t>::max()) return std::numeric_limits<std::int32_t>::max();
      return static_cast<std::int32_t>(rounded);
    }
    case K::kTrace: {
      const Request& r = (*d.trace)[rng.below(d.trace->size())];
      return output ? r.output_tokens : r.prompt_tokens;
    }
  }
  return 1;
}

}  // namespace

std::vector<Request> synthetic_requests(const SyntheticStreamSpec& spec) {
  const std::string where = "synthetic stream";
  if (!(std::isfinite(spec.rate_rps) && spec.rate_rps > 0)) throw InputError(where, "rate_rps must be a finite number > 0, got " + std::to_string(spec.rate_rps));
  if (!(std::isfinite(spec.duration_s) && spec.duration_s > 0))
    throw InputError(where, "duration_s must be a finite number > 0, got " + std::to_string(spec.duration_s));
  if (!(std::isfinite(spec.cv) && spec.cv > 0 && spec.cv <= 100)) throw InputError(where, "cv must be in (0, 100], got " + std::to_string(spec.cv));
  if (spec.rate_rps * spec.duration_s > kMaxSyntheticRequests)
    throw InputError(where, "rate_rps x duration_s is " + std::to_string(spec.rate_rps * spec.duration_s) +
                                " requests, over the limit of 100000000");
  check_distribution(spec.prompt, "prompt_tokens");
  check_distribution(spec.output, "output_tokens");
  Rng arrivals(spec.seed, "serving.arrivals");
  Rng prompt_rng(spec.seed, "serving.prompt_tokens");
  Rng output_rng(spec.seed, "serving.output_tokens");
  Rng rows(spec.seed, "serving.trace_rows");
  const bool joint = spec.prompt.kind == TokenDistribution::Kind::kTrace && spec.output.kind == TokenDistribution::Kind::kTrace &&
                     spec.prompt.trace == spec.output.trace;
  const double mean_gap_s = 1.0 / spec.rate_rps;
  const double shape = 1.0 / (spec.cv * spec.cv);  // gamma shape k: cv = 1 / sqrt(k)
  std::vector<Request> out;
  out.reserve(static_cast<std::size_t>(spec.rate_rps * spec.duration_s * 1.05) + 16);
  double t = 0.0;
  for (;;) {
    // cv = 1 draws the exponential directly: bit for bit a Poisson stream.
    t += spec.cv == 1.0 ? arrivals.exponential(mean_gap_s) : gamma_unit(arrivals, shape) * mean_gap_s / shape;
    if (!(t < spec.duration_s)) break;
    Request r;
    r.id = static_cast<std::int64_t>(out.size());
    r.arrival_s = t;
    if (joint) {
      const Request& row = (*spec.prompt.trace)[rows.below(spec.prompt.trace->size())];
      r.prompt_tokens = row.prompt_tokens;
      r.output_tokens = row.output_tokens;
    } else {
      r.prompt_tokens = draw_tokens(spec.prompt, prompt_rng, false);
      r.output_tokens = draw_tokens(spec.output, output_rng, true);
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace schedsim::serving
