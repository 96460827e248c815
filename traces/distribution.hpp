// Positive-valued distributions for synthetic workloads (job durations, and anything
// else measured in seconds). Parsed from YAML such as {dist: lognormal, median: 600,
// sigma: 1.5}; each knows its mean and second moment, which the queueing-theory tests
// and docs use.
#pragma once

#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/config_node.hpp"
#include "base/rng.hpp"

namespace schedsim {

class Distribution {
 public:
  enum class Kind { kConstant, kExponential, kLognormal, kPareto, kUniform, kHyperexponential, kEmpirical };

  static Distribution constant(double value);
  static Distribution exponential(double mean);
  static Distribution lognormal(double median, double sigma);
  static Distribution pareto(double scale, double shape);
  static Distribution uniform(double low, double high);
  // Mixture of exponentials: with probability weights[i], exponential with means[i].
  static Distribution hyperexponential(std::vector<double> weights, std::vector<double> means);
  // Uniform draws from observed values.
  static Distribution empirical(std::vector<double> values, std::string path, std::string column);

  // Throws InputError naming the key for unknown kinds, missing or bad parameters.
  static Distribution parse(const ConfigNode& node);

  double sample(Rng& rng) const;
  Kind kind() const { return kind_; }
  double mean() const;
  // E[X^2]; infinite for Pareto with shape <= 2.
  double second_moment() const;
  // The resolved YAML form (all parameters, defaults filled in).
  YAML::Node to_yaml() const;

 private:
  Kind kind_ = Kind::kConstant;
  double a_ = 0, b_ = 0;                   // kind-specific parameters
  std::vector<double> weights_, values_;   // hyperexponential cumulative weights / means; empirical values
  std::string path_, column_;
};

}  // namespace schedsim
