#include "traces/distribution.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/error.hpp"
#include "traces/csv.hpp"

namespace schedsim {

Distribution Distribution::constant(double value) {
  Distribution d;
  d.kind_ = Kind::kConstant;
  d.a_ = value;
  return d;
}

Distribution Distribution::exponential(double mean) {
  Distribution d;
  d.kind_ = Kind::kExponential;
  d.a_ = mean;
  return d;
}

Distribution Distribution::lognormal(double median, double sigma) {
  Distribution d;
  d.kind_ = Kind::kLognormal;
  d.a_ = median;
  d.b_ = sigma;
  return d;
}

Distribution Distribution::pareto(double scale, double shape) {
  Distribution d;
  d.kind_ = Kind::kPareto;
  d.a_ = scale;
  d.b_ = shape;
  return d;
}

Distribution Distribution::uniform(double low, double high) {
  Distribution d;
  d.kind_ = Kind::kUniform;
  d.a_ = low;
  d.b_ = high;
  return d;
}

Distribution Distribution::hyperexponential(std::vector<double> weights, std::vector<double> means) {
  Distribution d;
  d.kind_ = Kind::kHyperexponential;
  d.weights_ = std::move(weights);
  d.values_ = std::move(means);
  return d;
}

Distribution Distribution::empirical(std::vector<double> values, std::string path, std::string column) {
  Distribution d;
  d.kind_ = Kind::kEmpirical;
  d.values_ = std::move(values);
  d.path_ = std::move(path);
  d.column_ = std::move(column);
  return d;
}

namespace {

std::vector<double> load_empirical(const ConfigNode& node, const std::string& file, std::string& column, bool drop_nonpositive) {
  CsvReader csv(file, ',', "distribution file");
  std::vector<std::string_view> fields;
  std::vector<double> values;
  std::size_t col = 0;
  bool first = true;
  while (csv.next(fields)) {
    if (first) {
      first = false;
      double v = 0;
      const bool header = !parse_double(fields[0], v);
      if (header) {
        if (column.empty()) {
          column = std::string(trim(fields[0]));
        } else {
          auto it = std::find_if(fields.begin(), fields.end(), [&](std::string_view f) { return trim(f) == column; });
          if (it == fields.end()) throw InputError(csv.where(), "no column named '" + column + "' in the header");
          if (std::find_if(it + 1, fields.end(), [&](std::string_view f) { return trim(f) == column; }) != fields.end()) {
            throw InputError(csv.where(), "column '" + column + "' appears twice in the header; each column may appear once");
          }
          col = static_cast<std::size_t>(it - fields.begin());
        }
        continue;
      }
      if (!column.empty()) throw InputError(csv.where(), "the file has no header line, so column '" + column + "' cannot be found");
    }
    if (col >= fields.size()) throw InputError(csv.where(), "the row has no field " + std::to_string(col + 1));
    double v = 0;
    if (!parse_double(fields[col], v) || !std::isfinite(v)) {
      throw InputError(csv.where(), "expected a finite number, got '" + std::string(fields[col]) + "'");
    }
    if (!(v > 0)) {
      if (drop_nonpositive) continue;
      throw InputError(csv.where(), "value " + std::string(trim(fields[col])) + " is not > 0; durations must be positive (add nonpositive: drop to " +
                                        node.where() + " to skip such rows)");
    }
    values.push_back(v);
  }
  if (values.empty()) throw InputError(file, "no usable values in the file");
  return values;
}

}  // namespace

Distribution Distribution::parse(const ConfigNode& node) {
  if (node.is_scalar()) return constant(node.as_positive_double());
  if (!node.is_map()) node.fail("expected a distribution such as {dist: exponential, mean: 3600}");
  const std::string kind = node.child("dist").as_choice({"constant", "exponential", "lognormal", "pareto", "uniform", "hyperexponential", "empirical"});
  if (kind == "constant") {
    node.expect_map({"dist", "value"});
    return constant(node.child("value").as_positive_double());
  }
  if (kind == "exponential") {
    node.expect_map({"dist", "mean"});
    return exponential(node.child("mean").as_positive_double());
  }
  if (kind == "lognormal") {
    node.expect_map({"dist", "median", "sigma"});
    return lognormal(node.child("median").as_positive_double(), node.child("sigma").as_nonnegative_double());
  }
  if (kind == "pareto") {
    node.expect_map({"dist", "scale", "shape"});
    return pareto(node.child("scale").as_positive_double(), node.child("shape").as_positive_double());
  }
  if (kind == "uniform") {
    node.expect_map({"dist", "low", "high"});
    const double low = node.child("low").as_positive_double();
    const ConfigNode high_node = node.child("high");
    const double high = high_node.as_positive_double();
    if (high < low) high_node.fail("must be >= low (" + std::to_string(low) + ")");
    return uniform(low, high);
  }
  if (kind == "hyperexponential") {
    node.expect_map({"dist", "weights", "means"});
    const ConfigNode w = node.child("weights");
    const ConfigNode m = node.child("means");
    if (w.size() == 0 || w.size() != m.size()) m.fail("weights and means must be non-empty lists of the same length");
    std::vector<double> weights, means;
    double total = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      weights.push_back(w.at(i).as_positive_double());
      means.push_back(m.at(i).as_positive_double());
      total += weights.back();
    }
    if (std::fabs(total - 1.0) > 1e-9) w.fail("weights must sum to 1, they sum to " + std::to_string(total));
    return hyperexponential(std::move(weights), std::move(means));
  }
  node.expect_map({"dist", "path", "column", "nonpositive"});
  const ConfigNode path = node.child("path");
  std::string column = node.has("column") ? node.child("column").as_string() : "";
  const bool drop = node.has("nonpositive") && node.child("nonpositive").as_choice({"error", "drop"}) == "drop";
  std::vector<double> values = load_empirical(node, path.as_path(), column, drop);
  Distribution d = empirical(std::move(values), path.as_string(), column);
  d.b_ = drop ? 1 : 0;
  return d;
}

double Distribution::sample(Rng& rng) const {
  switch (kind_) {
    case Kind::kConstant: return a_;
    case Kind::kExponential: return rng.exponential(a_);
    case Kind::kLognormal: return rng.lognormal(a_, b_);
    case Kind::kPareto: return rng.pareto(a_, b_);
    case Kind::kUniform: return a_ + (b_ - a_) * rng.uniform();
    case Kind::kHyperexponential: {
      double u = rng.uniform();
      std::size_t i = 0;
      while (i + 1 < weights_.size() && u >= weights_[i]) u -= weights_[i++];
      return rng.exponential(values_[i]);
    }
    case Kind::kEmpirical: return values_[rng.below(values_.size())];
  }
  return 0;
}

double Distribution::mean() const {
  switch (kind_) {
    case Kind::kConstant: return a_;
    case Kind::kExponential: return a_;
    case Kind::kLognormal: return a_ * std::exp(b_ * b_ / 2);
    case Kind::kPareto: return b_ > 1 ? a_ * b_ / (b_ - 1) : std::numeric_limits<double>::infinity();
    case Kind::kUniform: return (a_ + b_) / 2;
    case Kind::kHyperexponential: {
      double m = 0;
      for (std::size_t i = 0; i < weights_.size(); ++i) m += weights_[i] * values_[i];
      return m;
    }
    case Kind::kEmpirical: return std::accumulate(values_.begin(), values_.end(), 0.0) / static_cast<double>(values_.size());
  }
  return 0;
}

double Distribution::second_moment() const {
  switch (kind_) {
    case Kind::kConstant: return a_ * a_;
    case Kind::kExponential: return 2 * a_ * a_;
    case Kind::kLognormal: return a_ * a_ * std::exp(2 * b_ * b_);
    case Kind::kPareto: return b_ > 2 ? a_ * a_ * b_ / (b_ - 2) : std::numeric_limits<double>::infinity();
    case Kind::kUniform: return (a_ * a_ + a_ * b_ + b_ * b_) / 3;
    case Kind::kHyperexponential: {
      double m = 0;
      for (std::size_t i = 0; i < weights_.size(); ++i) m += weights_[i] * 2 * values_[i] * values_[i];
      return m;
    }
    case Kind::kEmpirical: {
      double m = 0;
      for (double v : values_) m += v * v;
      return m / static_cast<double>(values_.size());
    }
  }
  return 0;
}

YAML::Node Distribution::to_yaml() const {
  YAML::Node n(YAML::NodeType::Map);
  switch (kind_) {
    case Kind::kConstant: n["dist"] = "constant"; n["value"] = a_; break;
    case Kind::kExponential: n["dist"] = "exponential"; n["mean"] = a_; break;
    case Kind::kLognormal: n["dist"] = "lognormal"; n["median"] = a_; n["sigma"] = b_; break;
    case Kind::kPareto: n["dist"] = "pareto"; n["scale"] = a_; n["shape"] = b_; break;
    case Kind::kUniform: n["dist"] = "uniform"; n["low"] = a_; n["high"] = b_; break;
    case Kind::kHyperexponential:
      n["dist"] = "hyperexponential";
      n["weights"] = weights_;
      n["means"] = values_;
      break;
    case Kind::kEmpirical:
      n["dist"] = "empirical";
      n["path"] = path_;
      n["column"] = column_;
      n["nonpositive"] = b_ > 0 ? "drop" : "error";
      break;
  }
  return n;
}

}  // namespace schedsim
