#include "policies/gavel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "world/geography/datacenters.hpp"
#include "base/error.hpp"

namespace schedsim {

namespace {

// row[k] -= f * pivot_row[k] over [first, last): the elimination's inner loop.
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline void eliminate_span(double* __restrict row, const double* __restrict pivot_row, double f, std::size_t first, std::size_t last) {
  for (std::size_t k = first; k < last; ++k) row[k] -= f * pivot_row[k];
}

// One pivot's elimination: every row listed in `rows` but the pivot row (`leave`) loses
// its entry in column `enter` times the pivot row, over the pivot row's nonzero columns
// (`nonzero`, ascending). A pivot row whose nonzeros fill a quarter of their span is
// eliminated over the span (a loop the compiler vectorizes). Zeros skipped, in a column of
// the pivot row or as a row's factor, would subtract f * 0, which leaves the value as it is
// (at most the sign of a zero differs, which no comparison sees), so the result is the
// dense elimination's, bit for bit. On x86-64 with GCC also compiled for AVX-512 and AVX2
// (picked at run time once per pivot: 8 or 4 doubles per instruction instead of SSE2's 2),
// without FMA (gavel.cpp is compiled with -ffp-contract=off): every entry gets the same
// multiply and subtract, the same bits on every machine.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void eliminate(double* t, std::size_t cols, const std::size_t* rows, std::size_t count, std::size_t leave, std::size_t enter, const std::size_t* nonzero,
               std::size_t nonzeros) {
  const double* const pivot_row = t + leave * cols;
  const std::size_t first = nonzero[0], last = nonzero[nonzeros - 1] + 1;  // the pivot's own column is 1
  const bool dense = 4 * nonzeros >= last - first;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t r = rows[i];
    if (r == leave) continue;
    double* const row = t + r * cols;
    const double f = row[enter];
    if (dense) {
      eliminate_span(row, pivot_row, f, first, last);  // row != pivot_row: no aliasing
    } else {
      for (std::size_t k = 0; k < nonzeros; ++k) row[nonzero[k]] -= f * pivot_row[nonzero[k]];
    }
  }
}

// row[k] /= p over [0, cols): the pivot row's division (a division, not a multiplication
// by 1 / p, which rounds differently).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void divide_row(double* __restrict row, double p, std::size_t cols) {
  for (std::size_t k = 0; k < cols; ++k) row[k] /= p;
}

// One pivot on (leave, enter): the pivot row divided by its entry in column `enter`, that
// column eliminated from the other rows listed in `rows` (those with a nonzero entry in
// it; the objective row included). `nonzero` is scratch of `cols` entries.
void pivot_on(std::vector<double>& t, std::size_t cols, std::size_t leave, std::size_t enter, const std::size_t* rows, std::size_t count,
              std::vector<std::size_t>& nonzero) {
  double* const pivot_row = &t[leave * cols];
  divide_row(pivot_row, pivot_row[enter], cols);
  std::size_t nonzeros = 0;  // branch-free: zeros and nonzeros mix unpredictably
  for (std::size_t k = 0; k < cols; ++k) {
    nonzero[nonzeros] = k;
    nonzeros += pivot_row[k] != 0.0;
  }
  eliminate(t.data(), cols, rows, count, leave, enter, nonzero.data(), nonzeros);
}

// The simplex on a filled tableau of m constraint rows [A | I | b] and the objective row
// [-c | 0 | 0] (row m), `cols` = n + m + 1 columns; basis[r] starts as n + r. Bland's
// rule. Returns the pivots taken.
std::uint64_t run_simplex(std::vector<double>& t, std::size_t m, std::size_t cols, std::vector<std::size_t>& basis) {
  constexpr double kEps = 1e-12;
  auto at = [&](std::size_t r, std::size_t k) -> double& { return t[r * cols + k]; };
  std::vector<std::size_t> nonzero(cols);  // columns of the pivot row that are not zero
  std::vector<std::size_t> rows(m + 1);    // rows with a nonzero entry in the entering column
  std::uint64_t pivots = 0;
  for (std::size_t iter = 0;; ++iter) {
    if (iter > 100000) throw InvariantError("simplex_maximize: no convergence");
    std::size_t enter = cols;
    const double* const objective = &t[m * cols];
    for (std::size_t k = 0; k + 1 < cols; ++k) {
      if (objective[k] < -kEps) {
        enter = k;
        break;
      }
    }
    if (enter == cols) break;  // optimal
    // The ratio test also lists the rows the elimination changes (those whose entry in
    // the entering column is not zero), so that it does not read the column again.
    std::size_t leave = m, changed = 0;
    double best = 0.0;
    for (std::size_t r = 0; r < m; ++r) {
      const double a = at(r, enter);
      rows[changed] = r;
      changed += a != 0.0;
      if (a > kEps) {
        const double ratio = at(r, cols - 1) / a;
        if (leave == m || ratio < best - kEps || (ratio <= best + kEps && basis[r] < basis[leave])) {
          leave = r;
          best = ratio;
        }
      }
    }
    if (leave == m) throw InvariantError("simplex_maximize: unbounded problem");
    rows[changed++] = m;  // the objective row: its entry is below -kEps
    pivot_on(t, cols, leave, enter, rows.data(), changed, nonzero);
    basis[leave] = enter;
    ++pivots;
  }
  return pivots;
}

// x from the final tableau: a basic variable's value is its row's right-hand side.
std::vector<double> basic_solution(const std::vector<double>& t, std::size_t m, std::size_t n, const std::vector<std::size_t>& basis) {
  const std::size_t cols = n + m + 1;
  std::vector<double> x(n, 0.0);
  for (std::size_t r = 0; r < m; ++r) {
    if (basis[r] < n) x[basis[r]] = std::max(0.0, t[r * cols + cols - 1]);
  }
  return x;
}

}  // namespace

std::vector<double> simplex_maximize(const std::vector<std::vector<double>>& A, const std::vector<double>& b, const std::vector<double>& c, SimplexStats* stats) {
  const std::size_t m = A.size(), n = c.size();
  const std::size_t cols = n + m + 1;  // variables, slacks, right-hand side
  std::vector<double> t((m + 1) * cols, 0.0);
  std::vector<std::size_t> basis(m);
  for (std::size_t r = 0; r < m; ++r) {
    if (A[r].size() != n || b[r] < 0) throw InvariantError("simplex_maximize: malformed problem");
    for (std::size_t k = 0; k < n; ++k) t[r * cols + k] = A[r][k];
    t[r * cols + n + r] = 1.0;
    t[r * cols + cols - 1] = b[r];
    basis[r] = n + r;
  }
  for (std::size_t k = 0; k < n; ++k) t[m * cols + k] = -c[k];
  const std::uint64_t pivots = run_simplex(t, m, cols, basis);
  if (stats) {
    ++stats->solves;
    stats->pivots += pivots;
  }
  return basic_solution(t, m, n, basis);
}

namespace {

// splitmix64's finalizer: a 64-bit mix with no simple relation between nearby inputs.
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A class's key for its tie factors: a hash of what makes the class (its GPU count and
// normalized throughputs), so that it does not depend on the order classes were seen in
// (a run resumed from a snapshot interns them again).
std::uint64_t class_key(int gpus, const std::vector<double>& a) {
  std::uint64_t h = mix64(0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(gpus));
  for (double v : a) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    h = mix64(h ^ bits);
  }
  return h;
}

// The secondary objective's weight of a class's share of type k: 1e-6 per member and
// unit of normalized throughput, times a tie factor in [1 + 2.5e-4, 1 + 1e-3] fixed per
// (class, type) (a hash of the class's key and the type: no simple relation between the
// factors, so that sums of their differences do not cancel). Without it the optimum is
// often not unique (a job as fast on two types, classes whose shares trade at the same
// total throughput), and which optimal vertex the simplex ends on would depend on its
// pivot path; with it the LP has one optimum, and a warm start finds the same one (about
// 1e-9 per unit: well above the solver's 1e-12 tolerance, far below the max-min level's
// weight of 1).
double secondary_weight(int members, double a, std::uint64_t key, std::size_t k) {
  const std::uint64_t z = mix64(key ^ (0x9e3779b97f4a7c15ULL * (k + 1)));
  const double u = static_cast<double>(z >> 11) / 9007199254740992.0;  // [0, 1)
  const double tie = 1.0 + 1e-3 * (0.25 + 0.75 * u);
  return 1e-6 * members * a * tie;
}

// The max-min LP of gavel_max_min_allocation, its tableau filled in place (the rows
// simplex_maximize would build from A, b and c, with the same values). normalized(c)
// gives class c's row of normalized throughputs.
// Variables: X[c][t] at c * types + t, then the level lambda. Rows: a job's shares of
// time sum to at most 1 (one per class), the devices of each type, lambda <= each class's
// normalized throughput (one per class). Fills t and basis (the slacks'). key_of(c) gives
// class c's class_key.
template <typename Normalized, typename Key>
void fill_max_min_tableau(std::size_t classes, const Normalized& normalized, const Key& key_of, const std::vector<int>& gpus, const std::vector<int>& members,
                          const std::vector<int>& capacity, std::vector<double>& t, std::vector<std::size_t>& basis) {
  const std::size_t types = capacity.size();
  const std::size_t n = classes * types + 1;
  const std::size_t lambda = n - 1;
  const std::size_t m = 2 * classes + types;
  const std::size_t cols = n + m + 1;
  t.assign((m + 1) * cols, 0.0);
  auto at = [&](std::size_t r, std::size_t k) -> double& { return t[r * cols + k]; };
  for (std::size_t c = 0; c < classes; ++c) {
    for (std::size_t k = 0; k < types; ++k) at(c, c * types + k) = 1.0;
    at(c, cols - 1) = 1.0;
  }
  for (std::size_t k = 0; k < types; ++k) {
    const std::size_t r = classes + k;
    for (std::size_t c = 0; c < classes; ++c) at(r, c * types + k) = static_cast<double>(gpus[c]) * members[c];
    if (capacity[k] < 0) throw InvariantError("simplex_maximize: malformed problem");
    at(r, cols - 1) = capacity[k];
  }
  for (std::size_t c = 0; c < classes; ++c) {
    const std::size_t r = classes + types + c;
    const std::vector<double>& a = normalized(c);
    for (std::size_t k = 0; k < types; ++k) at(r, c * types + k) = -a[k];
    at(r, lambda) = members[c] > 0 ? 1.0 : 0.0;  // a class without members (kept by a warm start) bounds nothing
  }
  basis.resize(m);
  for (std::size_t r = 0; r < m; ++r) at(r, n + r) = 1.0, basis[r] = n + r;
  at(m, lambda) = -1.0;
  for (std::size_t c = 0; c < classes; ++c) {
    const std::vector<double>& a = normalized(c);
    const std::uint64_t key = key_of(c);
    for (std::size_t k = 0; k < types; ++k) at(m, c * types + k) = -secondary_weight(members[c], a[k], key, k);
  }
}

template <typename Normalized, typename Key>
std::vector<std::vector<double>> max_min_allocation(std::size_t classes, const Normalized& normalized, const Key& key_of, const std::vector<int>& gpus,
                                                    const std::vector<int>& members, const std::vector<int>& capacity, double* level,
                                                    SimplexStats* stats) {
  const std::size_t types = capacity.size();
  const std::size_t n = classes * types + 1;
  const std::size_t lambda = n - 1;
  const std::size_t m = 2 * classes + types;
  const std::size_t cols = n + m + 1;
  std::vector<double> t;
  std::vector<std::size_t> basis;
  fill_max_min_tableau(classes, normalized, key_of, gpus, members, capacity, t, basis);
  const std::uint64_t pivots = run_simplex(t, m, cols, basis);
  if (stats) {
    ++stats->solves;
    stats->pivots += pivots;
  }
  const std::vector<double> x = basic_solution(t, m, n, basis);
  std::vector<std::vector<double>> X(classes, std::vector<double>(types, 0.0));
  for (std::size_t c = 0; c < classes; ++c) {
    // A type where the class cannot run (normalized throughput 0) gets share 0: the LP is
    // indifferent to such a variable and may leave it positive.
    const std::vector<double>& a = normalized(c);
    for (std::size_t k = 0; k < types; ++k) X[c][k] = a[k] > 0 ? x[c * types + k] : 0.0;
  }
  if (level) *level = x[lambda];
  return X;
}

}  // namespace

double gavel_secondary_weight(int members, int gpus, const std::vector<double>& normalized, std::size_t type) {
  return secondary_weight(members, normalized[type], class_key(gpus, normalized), type);
}

std::vector<std::vector<double>> gavel_max_min_allocation(const std::vector<std::vector<double>>& normalized, const std::vector<int>& gpus,
                                                          const std::vector<int>& members, const std::vector<int>& capacity, double* level,
                                                          SimplexStats* stats) {
  return max_min_allocation(normalized.size(), [&](std::size_t c) -> const std::vector<double>& { return normalized[c]; }, [&](std::size_t c) { return class_key(gpus[c], normalized[c]); },
                            gpus, members, capacity,
                            level, stats);
}

namespace {

// The max-min LP kept from one solve to the next, so that the next LP starts from the
// last optimal basis. Consecutive rounds' LPs mostly differ in the member counts of a few
// classes (a job arrived or finished): a member count is in the capacity rows' entries
// and the objective of its class's columns only, so the tableau is updated in place
// (B^-1 is in the slack columns) and re-optimized, a few pivots instead of ~100 from the
// slack basis; a class that lost its last member stays in the tableau, decoupled, so
// that it can come back, and a new class joins it decoupled (add_class). A tableau too
// large for the live classes, or every kColdEvery warm solves (rounding accumulates in
// an updated tableau), solves from scratch. The two paths may round the
// optimum differently; the policy snaps the shares (snap_share), so both give the same
// run (tests compare them).
class WarmMaxMinLp {
 public:
  struct Result {
    bool changed = false;  // another LP than the last one (a solve)
    bool warm = false;     // started from the last basis
    std::uint64_t pivots = 0;
  };

  // Solves the LP of the classes `ids` (in this order when solved from scratch) with
  // `members`; norm(id) and gpus[id] give a class's throughputs and GPU count. share(id, k)
  // then gives class id's share of type k.
  template <typename Normalized>
  Result solve(const std::vector<int>& ids, const std::vector<int>& members, const Normalized& norm, const std::vector<int>& gpus,
               const std::vector<int>& capacity, bool warm) {
    Result result;
    for (int id : ids) {
      if (static_cast<std::size_t>(id) >= pos_.size()) pos_.resize(static_cast<std::size_t>(id) + 1, -1);
    }
    // The tableau's classes: those of the last solve from scratch; a class that has no
    // members now stays with member count 0 (decoupled: no capacity, no objective, no
    // bound on the level), so that it can come back without a solve from scratch.
    bool contained = valid_ && warm && capacity == capacity_;
    if (contained && warm_solves_ < kColdEvery) {
      // A class the tableau lacks joins it without members (decoupled: its two rows and
      // columns need no pivot), then gets its members like any other class; while the
      // tableau holds at most twice the live classes plus kKeepDead.
      for (std::size_t i = 0; i < ids.size(); ++i) {
        if (pos_[static_cast<std::size_t>(ids[i])] >= 0 || classes_ + 1 > 2 * ids.size() + kKeepDead) continue;
        add_class(ids[i], gpus[static_cast<std::size_t>(ids[i])], norm(ids[i]));
      }
    }
    for (std::size_t i = 0; contained && i < ids.size(); ++i) contained = pos_[static_cast<std::size_t>(ids[i])] >= 0;
    target_.assign(ids_.size(), 0);
    if (contained) {
      for (std::size_t i = 0; i < ids.size(); ++i) target_[static_cast<std::size_t>(pos_[static_cast<std::size_t>(ids[i])])] = members[i];
      if (target_ == members_) return result;  // the same LP, the classes maybe in another order
    }
    result.changed = true;
    if (contained && warm_solves_ < kColdEvery && update(norm, result.pivots) && reoptimize(result.pivots)) {
      ++warm_solves_;
      result.warm = true;
      extract();
      return result;
    }
    // The first solve, a tableau too large for a new class, a pivot too small to trust,
    // no feasible basis, or kColdEvery warm solves: from scratch (which rebuilds
    // everything update may have left half done), with the classes now without members
    // kept (kKeepDead).
    std::vector<int> next = ids;
    std::vector<int> next_members = members;
    std::size_t kept = 0;
    for (int id : ids_) {
      pos_[static_cast<std::size_t>(id)] = -1;
      if (std::find(ids.begin(), ids.end(), id) != ids.end() || kept >= std::max(kKeepDead, ids.size())) continue;
      next.push_back(id);
      next_members.push_back(0);
      ++kept;
    }
    ids_ = next;
    members_ = next_members;
    capacity_ = capacity;
    gpus_.clear();
    keys_.clear();
    for (std::size_t i = 0; i < ids_.size(); ++i) {
      pos_[static_cast<std::size_t>(ids_[i])] = static_cast<int>(i);
      gpus_.push_back(gpus[static_cast<std::size_t>(ids_[i])]);
      keys_.push_back(class_key(gpus_.back(), norm(ids_[i])));
    }
    shape(ids_.size(), capacity.size());
    fill_max_min_tableau(
        classes_, [&](std::size_t c) -> const std::vector<double>& { return norm(ids_[c]); },
        [&](std::size_t c) { return keys_[c]; }, gpus_, members_, capacity_, t_, basis_);
    result.pivots += run_simplex(t_, m_, cols_, basis_);
    valid_ = true;
    warm_solves_ = 0;
    extract();
    return result;
  }

  // The last solution's share of type k for class id (which was in the last solve).
  double share(int id, std::size_t k) const { return x_[static_cast<std::size_t>(pos_[static_cast<std::size_t>(id)]) * types_ + k]; }

 private:
  static constexpr int kColdEvery = 64;
  // Classes without members a solve from scratch keeps: as many as have members, at
  // least 32 (more make every pivot dearer, fewer send returning classes from scratch).
  static constexpr std::size_t kKeepDead = 32;
  static constexpr double kEps = 1e-12;

  void shape(std::size_t classes, std::size_t types) {
    classes_ = classes;
    types_ = types;
    n_ = classes * types + 1;
    m_ = 2 * classes + types;
    cols_ = n_ + m_ + 1;
  }
  double& at(std::size_t r, std::size_t k) { return t_[r * cols_ + k]; }

  void pivot(std::size_t leave, std::size_t enter) {
    rows_.clear();
    for (std::size_t r = 0; r <= m_; ++r) {
      if (at(r, enter) != 0.0) rows_.push_back(r);
    }
    nonzero_.resize(cols_);
    pivot_on(t_, cols_, leave, enter, rows_.data(), rows_.size(), nonzero_);
    basis_[leave] = enter;
  }

  // Appends class `id` to the tableau with no members: its job row (shares sum to at most
  // 1) and its bound row with a level coefficient of 0 (-a.X <= 0) are canonical with
  // their slacks basic, and its columns are 0 in every other row and the objective (no
  // capacity entries, no objective without members). The rest keeps its values, moved to
  // the new layout (the level and the slacks shift).
  void add_class(int id, int gpus, const std::vector<double>& a) {
    const std::size_t C = classes_, T = types_, old_n = n_, old_m = m_, old_cols = cols_;
    old_t_.swap(t_);
    old_basis_.swap(basis_);
    shape(C + 1, T);
    auto row_of = [&](std::size_t r) { return r < C ? r : r == old_m ? m_ : r + 1; };  // old row -> new row
    auto col_of = [&](std::size_t k) {                                                    // old column -> new column
      if (k < C * T) return k;
      if (k == C * T) return n_ - 1;  // the level
      if (k + 1 == old_cols) return cols_ - 1;
      return n_ + row_of(k - old_n);
    };
    col_map_.resize(old_cols);
    for (std::size_t k = 0; k < old_cols; ++k) col_map_[k] = col_of(k);
    t_.assign((m_ + 1) * cols_, 0.0);
    for (std::size_t r = 0; r <= old_m; ++r) {
      const double* const from = &old_t_[r * old_cols];
      double* const to = &t_[row_of(r) * cols_];
      for (std::size_t k = 0; k < old_cols; ++k) to[col_map_[k]] = from[k];
    }
    basis_.assign(m_, 0);
    for (std::size_t r = 0; r < old_m; ++r) basis_[row_of(r)] = col_of(old_basis_[r]);
    const std::size_t job_row = C, bound_row = m_ - 1;
    for (std::size_t k = 0; k < T; ++k) {
      at(job_row, C * T + k) = 1.0;
      at(bound_row, C * T + k) = -a[k];
    }
    at(job_row, n_ + job_row) = 1.0;
    at(job_row, cols_ - 1) = 1.0;
    at(bound_row, n_ + bound_row) = 1.0;
    basis_[job_row] = n_ + job_row;
    basis_[bound_row] = n_ + bound_row;
    pos_[static_cast<std::size_t>(id)] = static_cast<int>(C);
    ids_.push_back(id);
    members_.push_back(0);
    gpus_.push_back(gpus);
    keys_.push_back(class_key(gpus, a));
  }

  // The member counts of the classes that changed (target_, by tableau position), in the
  // tableau: a column's new entries come in through B^-1 (the slack columns: column j
  // gets delta times the slack column of each changed row), its objective directly, and a
  // basic column is pivoted back into its row. A class's columns change in the capacity
  // rows (GPUs x members) and the objective; the level's column in the class's bound row
  // when the class gains its first member or loses its last. false: a pivot too small
  // to trust.
  template <typename Normalized>
  bool update(const Normalized& norm, std::uint64_t& pivots) {
    for (std::size_t c = 0; c < classes_; ++c) {
      const int before = members_[c], after = target_[c];
      if (before == after) continue;
      const double delta = static_cast<double>(gpus_[c]) * (after - before);  // exact: small integers
      const std::vector<double>& a = norm(ids_[c]);
      for (std::size_t k = 0; k < types_; ++k) {
        const std::size_t j = c * types_ + k;
        add_to_column(j, classes_ + k, delta);
        at(m_, j) += secondary_weight(before, a[k], keys_[c], k) - secondary_weight(after, a[k], keys_[c], k);
        if (!repivot(j, pivots)) return false;
      }
      if ((before > 0) != (after > 0)) {
        add_to_column(n_ - 1, classes_ + types_ + c, after > 0 ? 1.0 : -1.0);
        if (!repivot(n_ - 1, pivots)) return false;
      }
      members_[c] = after;
    }
    return true;
  }

  // Column j's entry in constraint row `row` grows by delta: B^-1 times that, the slack
  // column of the row times delta, in every row and the objective (y's entry).
  void add_to_column(std::size_t j, std::size_t row, double delta) {
    const std::size_t slack = n_ + row;
    for (std::size_t r = 0; r <= m_; ++r) {
      const double s = at(r, slack);
      if (s != 0.0) at(r, j) += delta * s;
    }
  }

  // A basic column j changed: pivot it back into its row.
  bool repivot(std::size_t j, std::uint64_t& pivots) {
    for (std::size_t r = 0; r < m_; ++r) {
      if (basis_[r] != j) continue;
      if (std::fabs(at(r, j)) < 1e-9) return false;
      pivot(r, j);
      ++pivots;
      return true;
    }
    return true;  // not basic: its reduced cost is in the objective row already
  }

  // Back to an optimum: dual simplex pivots while a right-hand side is negative (reduced
  // costs below 0 count as 0 in its ratio test: a basis infeasible both ways still gets
  // to a feasible one), then the primal simplex. false: no feasible basis that way within
  // the iteration limit.
  bool reoptimize(std::uint64_t& pivots) {
    bool primal = true;
    for (std::size_t r = 0; r < m_; ++r) primal = primal && at(r, cols_ - 1) >= -kEps;
    if (!primal) {
      for (int iter = 0;; ++iter) {
        if (iter > 10000) return false;
        // Leaving: the most negative right-hand side (ties: the smaller basic variable).
        std::size_t leave = m_;
        for (std::size_t r = 0; r < m_; ++r) {
          const double v = at(r, cols_ - 1);
          if (v < -kEps && (leave == m_ || v < at(leave, cols_ - 1) || (v == at(leave, cols_ - 1) && basis_[r] < basis_[leave]))) leave = r;
        }
        if (leave == m_) break;
        // Entering: the smallest ratio of reduced cost to |entry| over the row's negative entries.
        std::size_t enter = cols_;
        double best = 0.0;
        for (std::size_t k = 0; k + 1 < cols_; ++k) {
          const double e = at(leave, k);
          if (e >= -kEps) continue;
          const double ratio = std::max(0.0, at(m_, k)) / -e;
          if (enter == cols_ || ratio < best) {
            enter = k;
            best = ratio;
          }
        }
        if (enter == cols_) return false;  // infeasible: cannot be (x = 0 is feasible)
        if (std::fabs(at(leave, enter)) < 1e-9) return false;
        pivot(leave, enter);
        ++pivots;
      }
    }
    pivots += run_simplex(t_, m_, cols_, basis_);
    return true;
  }

  void extract() { x_ = basic_solution(t_, m_, n_, basis_); }

  bool valid_ = false;
  int warm_solves_ = 0;  // since the last solve from scratch
  std::size_t classes_ = 0, types_ = 0, n_ = 0, m_ = 0, cols_ = 0;
  std::vector<double> t_;
  std::vector<std::size_t> basis_;
  std::vector<int> ids_, members_, gpus_, capacity_;
  std::vector<std::uint64_t> keys_;  // by tableau position: class_key
  std::vector<double> old_t_;        // add_class's scratch
  std::vector<std::size_t> old_basis_, col_map_;
  std::vector<int> pos_;  // by class id: its position in the tableau, -1 = none
  std::vector<double> x_;
  std::vector<std::size_t> rows_, nonzero_;
  std::vector<int> target_;  // by tableau position: the member counts asked for
};

// A share of time rounded to a multiple of 2^-30 (about 1e-9; exact: a power-of-two
// scale and an integer rounding). Mathematically equal shares that an LP solve computes
// with different rounding noise (a few ulps) become the same double, so the round's
// priorities, and so the run, do not depend on the pivot path that found them.
double snap_share(double x) {
  constexpr double kGrid = 1073741824.0;  // 2^30
  return std::nearbyint(x * kGrid) / kGrid;
}

// Options beside round_s (defaults: plain gavel).
struct GavelVariant {
  std::string name = "gavel";
  bool equal_share = false;          // normalize: equal_share (else best_type)
  bool fill_between_rounds = true;
  double reallocate_every_s = 0;     // 0: a new allocation at every round boundary
  bool warm_start = true;            // each LP from the last optimal basis (false: from scratch; the same run)
};

class GavelPolicy : public Policy {
 public:
  explicit GavelPolicy(const GavelOptions& options)
      : round_us_(static_cast<std::int64_t>(std::llround(options.round_s * 1e6))),
        reuse_(options.reuse),
        warm_start_(options.warm_start),
        counters_(options.counters) {}
  std::string name() const override { return variant_.name; }
  void set_variant(const GavelVariant& v) {
    variant_ = v;
    warm_start_ = warm_start_ && v.warm_start;
  }

  void on_job_queued(const SchedulerView& view, JobSlot job) override {
    Job& j = grow(job);
    if (view.job(job).preemptions() == 0) j = Job{};  // a new arrival (slots are reused)
    if (view.job(job).preemptions() == 0) changed_ = true;
    j.queued_seq = next_seq_++;
    queue_.emplace(j.queued_seq, job);
  }

  void on_job_finished(const SchedulerView& /*view*/, JobSlot job) override {
    Job& j = jobs_[static_cast<std::size_t>(job)];
    queue_.erase({j.queued_seq, job});
    changed_ = true;
  }

  void decide(const SchedulerView& view, ActionBatch& out) override {
    const ClusterSpec& spec = view.cluster();
    if (nodes_of_type_.empty()) {  // the spec is immutable: devices and nodes by type once
      types_ = static_cast<int>(spec.device_types().size());
      capacity_.assign(static_cast<std::size_t>(types_), 0);
      nodes_of_type_.resize(static_cast<std::size_t>(types_));
      for (int k = 0; k < spec.num_nodes(); ++k) {
        capacity_[static_cast<std::size_t>(spec.node(k).type_index)] += spec.node(k).num_devices;
        nodes_of_type_[static_cast<std::size_t>(spec.node(k).type_index)].push_back(k);
      }
    }
    type_avail_valid_ = false;
    const std::int64_t now_us = view.now().us();
    // This batch's view of usable devices: the cluster's free ones, minus those taken,
    // plus those released by this batch (sparse overlay: O(changes) per decision).
    state_ = &view.cluster_state();
    geo_ = view.geography() && view.geography()->num_sites() > 1 ? view.geography() : nullptr;
    for (DeviceId d : marked_) mark_[static_cast<std::size_t>(d)] = 0;
    marked_.clear();
    for (int k : touched_nodes_) node_delta_[static_cast<std::size_t>(k)] = 0;
    touched_nodes_.clear();
    mark_.resize(static_cast<std::size_t>(spec.num_devices()), 0);
    node_delta_.resize(static_cast<std::size_t>(spec.num_nodes()), 0);
    avail_total_ = state_->free_devices();
    if (now_us >= round_end_us_) {
      round_end_us_ = now_us + round_us_;
      new_round(view, out);
    } else if (variant_.fill_between_rounds) {
      fill(view, out);
    }
    // The next round boundary is a decision point even when nothing else happens then.
    if (view.num_pending() + view.num_running() > 0) out.wake_at(Tick::from_us(round_end_us_));
  }

  // The per-decision overlay (mark_, node_delta_...) is reset at the start of each decision.
  void snapshot(SnapshotArchive& ar) override {
    ar(round_end_us_, next_seq_, queue_);
    ar.io_each(jobs_, [&](Job& j) { ar(j.queued_seq, j.received_s, j.x, j.granted, j.on_type, j.since_us); });
    ar(solved_once_, changed_, last_solve_us_);  // reallocate_every_s
    if (!ar.loading()) return;
    // Slots and types index jobs_ and the per-type vectors unchecked.
    for (const auto& [seq, slot] : queue_) {
      ar.check_job_slot(slot, "gavel's queue");
      ar.check(static_cast<std::size_t>(slot) < jobs_.size() && jobs_[static_cast<std::size_t>(slot)].queued_seq == seq, "gavel's queue entry for job slot " + std::to_string(slot) + " has another sequence");
    }
    for (const Job& j : jobs_) {
      const int types = static_cast<int>(j.received_s.size());
      ar.check((j.x.empty() || j.x.size() == j.received_s.size()) && j.granted >= -1 && j.granted < types && j.on_type >= -1 && j.on_type < types,
               "gavel's job record names a device type it has no entry for");
    }
  }
 private:
  struct Job {
    std::uint64_t queued_seq = 0;
    std::vector<double> received_s;  // by type: time held on it
    std::vector<double> x;           // this round's allocation by type
    int granted = -1;                // the type granted this round, -1 = none
    int on_type = -1;                // the type it runs on, -1 = not running
    std::int64_t since_us = 0;       // since when (received_s is up to date until then)
    // The job's class (index into class_norm_), valid while class_arrival_seq is the
    // job's arrival_seq: its normalized throughputs are computed once per job, not per
    // round (a physics rate query looks the job up in the throughput matrix by name).
    int cls = -1;
    std::uint64_t class_arrival_seq = 0;
  };

  Job& grow(JobSlot job) {
    const auto i = static_cast<std::size_t>(job);
    if (jobs_.size() <= i) jobs_.resize(i + 1);
    return jobs_[i];
  }

  int type_of(const ClusterSpec& spec, DeviceId d) const { return spec.node(spec.node_of(d)).type_index; }

  // Folds the time since the job's last placement change into its received time on its
  // type (lazily: O(1) per change, not O(running jobs) per decision).
  void account(Job& j, std::int64_t now_us) {
    j.received_s.resize(static_cast<std::size_t>(types_), 0.0);
    if (j.on_type >= 0) j.received_s[static_cast<std::size_t>(j.on_type)] += static_cast<double>(now_us - j.since_us) / 1e6;
    j.since_us = now_us;
  }

  // Rates normalized by the job's best type (1 on every type without physics); 0 on
  // types with fewer devices than the job needs.
  void normalized(const SchedulerView& view, const JobView& spec, std::vector<double>& out) const {
    out.assign(static_cast<std::size_t>(types_), 1.0);
    const PhysicsModel* physics = view.physics();
    double best = 0.0;
    for (int t = 0; t < types_; ++t) {
      double& r = out[static_cast<std::size_t>(t)];
      if (physics) r = physics->estimated_rate(spec, t, spec.num_gpus());
      if (spec.num_gpus() > capacity_[static_cast<std::size_t>(t)]) r = 0.0;
      best = std::max(best, r);
    }
    if (variant_.equal_share) {  // Gavel's LP: over the rate on an equal share of every type, times the GPUs
      double share = 0.0, total = 0.0;
      for (int t = 0; t < types_; ++t) {
        share += out[static_cast<std::size_t>(t)] * capacity_[static_cast<std::size_t>(t)];
        total += capacity_[static_cast<std::size_t>(t)];
      }
      for (double& r : out) r = share > 0 ? r * spec.num_gpus() * total / share : 0.0;
      return;
    }
    for (double& r : out) r = best > 0 ? r / best : 0.0;
  }

  // The class of (GPUs, normalized throughputs) of the job in `slot`. The physics model's
  // estimated_rate is a function of the job's spec and the device type (consolidated and
  // uncontended, PhysicsModel), so a job's class is fixed for its life; classes are
  // interned for the run. Without reuse (GavelOptions::reuse) every call recomputes.
  int class_of(const SchedulerView& view, JobSlot slot) {
    const JobView& js = view.job(slot);
    Job& j = jobs_[static_cast<std::size_t>(slot)];
    if (reuse_ && j.cls >= 0 && j.class_arrival_seq == js.arrival_seq()) return j.cls;
    normalized(view, js, a_);
    if (counters_) ++counters_->rate_vectors;
    const auto [it, added] = class_ids_.emplace(std::make_pair(js.num_gpus(), a_), static_cast<int>(class_norm_.size()));
    if (added) {
      class_norm_.push_back(a_);
      class_gpus_.push_back(js.num_gpus());
      class_key_.push_back(class_key(js.num_gpus(), a_));
      local_class_.push_back(-1);
    }
    j.cls = it->second;
    j.class_arrival_seq = js.arrival_seq();
    return j.cls;
  }

  // This round's LP (lp_classes_, lp_members_, capacity_) solved, or the last solution
  // when the LP is the one last solved: same classes in the same order, same member
  // counts, same capacities. The solver is deterministic, so the reused answer is the
  // bits a fresh solve would give. A round whose jobs are those of the last round does
  // no solve unless the classes' first-seen order changed (running jobs come first).
  // This is the path without warm start (GavelOptions::warm_start, the policy's
  // warm_start: false): every LP from the slack basis.
  const std::vector<std::vector<double>>& allocation() {
    if (reuse_ && solved_ && lp_classes_ == last_classes_ && lp_members_ == last_members_ && capacity_ == last_capacity_) return last_X_;
    if (warm_start_ && reuse_) return warm_allocation();
    last_classes_ = lp_classes_;
    last_members_ = lp_members_;
    last_capacity_ = capacity_;
    solved_ = true;
    if (lp_classes_.empty()) {
      last_X_.clear();
      return last_X_;
    }
    // The classes' throughputs are read in place (not copied per solve).
    lp_gpus_.clear();
    for (int g : lp_classes_) lp_gpus_.push_back(class_gpus_[static_cast<std::size_t>(g)]);
    SimplexStats stats;
    last_X_ = max_min_allocation(
        lp_classes_.size(), [&](std::size_t c) -> const std::vector<double>& { return class_norm_[static_cast<std::size_t>(lp_classes_[c])]; },
        [&](std::size_t c) { return class_key_[static_cast<std::size_t>(lp_classes_[c])]; }, lp_gpus_, lp_members_, capacity_, nullptr, &stats);
    for (auto& row : last_X_) {
      for (double& x : row) x = snap_share(x);
    }
    if (counters_) {
      ++counters_->lp_solves;
      counters_->lp_pivots += stats.pivots;
    }
    return last_X_;
  }

  // allocation() from the last optimal basis (WarmMaxMinLp): the same classes in another
  // order with the same members need no pivot.
  const std::vector<std::vector<double>>& warm_allocation() {
    last_classes_ = lp_classes_;
    last_members_ = lp_members_;
    last_capacity_ = capacity_;
    solved_ = true;
    last_X_.assign(lp_classes_.size(), std::vector<double>(static_cast<std::size_t>(types_), 0.0));
    if (lp_classes_.empty()) return last_X_;
    const auto result = warm_lp_.solve(
        lp_classes_, lp_members_, [&](int g) -> const std::vector<double>& { return class_norm_[static_cast<std::size_t>(g)]; }, class_gpus_,
        capacity_, true);
    if (counters_ && result.changed) {
      ++counters_->lp_solves;
      counters_->lp_pivots += result.pivots;
      if (result.warm) ++counters_->lp_warm_solves;
    }
    for (std::size_t i = 0; i < lp_classes_.size(); ++i) {
      const int g = lp_classes_[i];
      const std::vector<double>& a = class_norm_[static_cast<std::size_t>(g)];
      for (std::size_t k = 0; k < static_cast<std::size_t>(types_); ++k) last_X_[i][k] = a[k] > 0 ? snap_share(warm_lp_.share(g, k)) : 0.0;
    }
    return last_X_;
  }

  void new_round(const SchedulerView& view, ActionBatch& out) {
    const ClusterSpec& spec = view.cluster();
    // Jobs in the system (pending and running; stopping ones are on their way back).
    live_.clear();
    for (JobSlot s = view.first_running(); s != kNoJob; s = view.next_running(s)) {
      if (view.job(s).status() == JobStatus::kRunning) live_.push_back(s);
    }
    for (const auto& [seq, s] : queue_) live_.push_back(s);
    // Classes of equal (GPUs, normalized throughputs), in first-seen order.
    lp_classes_.clear();
    lp_members_.clear();
    job_class_.resize(live_.size());
    for (std::size_t i = 0; i < live_.size(); ++i) {
      const int g = class_of(view, live_[i]);
      int& local = local_class_[static_cast<std::size_t>(g)];
      if (local < 0) {
        local = static_cast<int>(lp_classes_.size());
        lp_classes_.push_back(g);
        lp_members_.push_back(0);
      }
      ++lp_members_[static_cast<std::size_t>(local)];
      job_class_[i] = local;
    }
    for (int g : lp_classes_) local_class_[static_cast<std::size_t>(g)] = -1;
    if (counters_) ++counters_->rounds;
    // reallocate_every_s: the last allocation stands (jobs new since it have none) until
    // a job arrived or finished and that long passed, as in Gavel's simulator.
    const std::int64_t every_us = static_cast<std::int64_t>(std::llround(variant_.reallocate_every_s * 1e6));
    const bool solve = every_us <= 0 || !solved_once_ || (changed_ && view.now().us() - last_solve_us_ >= every_us);
    if (solve) {
      solved_once_ = true;
      changed_ = false;
      last_solve_us_ = view.now().us();
    }
    static const std::vector<std::vector<double>> kNoAllocation;
    const auto& X = solve ? allocation() : kNoAllocation;
    // Gavel's priorities: allocation over the share of its time the job received on the type.
    auto& cand = cand_;  // (-priority, -x, seq, slot, type); kept across rounds (no allocation per round)
    cand.clear();
    const std::int64_t now_us = view.now().us();
    for (std::size_t i = 0; i < live_.size(); ++i) {
      Job& j = jobs_[static_cast<std::size_t>(live_[i])];
      account(j, now_us);
      if (solve) j.x = X[static_cast<std::size_t>(job_class_[i])];
      j.x.resize(static_cast<std::size_t>(types_), 0.0);
      j.granted = -1;
      j.received_s.resize(static_cast<std::size_t>(types_), 0.0);
      for (int t = 0; t < types_; ++t) {
        const double x = j.x[static_cast<std::size_t>(t)];
        if (x <= 1e-9) continue;
        const double in_system_s = (view.now() - view.job(live_[i]).submit()).seconds();
        const double got = in_system_s > 0 ? j.received_s[static_cast<std::size_t>(t)] / in_system_s : 0.0;
        const double priority = got > 0 ? x / got : std::numeric_limits<double>::infinity();
        cand.emplace_back(-priority, -x, view.job(live_[i]).arrival_seq(), live_[i], t);
      }
    }
    std::sort(cand.begin(), cand.end());
    std::vector<int>& left = left_;
    left = capacity_;
    for (const auto& [np, nx, seq, s, t] : cand) {
      Job& j = jobs_[static_cast<std::size_t>(s)];
      const int n = view.job(s).num_gpus();
      if (j.granted >= 0 || left[static_cast<std::size_t>(t)] < n) continue;
      j.granted = t;
      left[static_cast<std::size_t>(t)] -= n;
    }
    // Running jobs that lost their grant stop; with free checkpoints their devices serve
    // this same batch.
    const PhysicsModel* physics = view.physics();
    for (JobSlot s : live_) {
      const JobView& r = view.job(s);
      if (r.status() != JobStatus::kRunning || jobs_[static_cast<std::size_t>(s)].granted >= 0) continue;
      out.preempt(s);
      account(jobs_[static_cast<std::size_t>(s)], now_us);
      jobs_[static_cast<std::size_t>(s)].on_type = -1;
      if (!physics || Tick::from_seconds(physics->checkpoint_save_s(r, static_cast<int>(r.devices().size()))).us() == 0) {
        release(spec, r.devices());
      }
    }
    // Granted running jobs on another type move (their old devices free at once), granted
    // pending jobs start; in priority order.
    for (const auto& [np, nx, seq, s, t] : cand) {
      const JobView& r = view.job(s);
      if (jobs_[static_cast<std::size_t>(s)].granted != t || r.status() != JobStatus::kRunning) continue;
      if (type_of(spec, r.devices().front()) == t) continue;  // stays where it is
      devices_.clear();
      if (!take(spec, r, t)) continue;
      out.move(s, devices_);
      account(jobs_[static_cast<std::size_t>(s)], now_us);
      jobs_[static_cast<std::size_t>(s)].on_type = t;
      release(spec, r.devices());
    }
    fill(view, out);
  }

  // Starts pending jobs: granted ones on their type first, then the rest in queue order on
  // the type where they are fastest with room (work conservation).
  void fill(const SchedulerView& view, ActionBatch& out) {
    const ClusterSpec& spec = view.cluster();
    started_.clear();
    for (int pass = 0; pass < 2; ++pass) {
      for (const auto& [seq, s] : queue_) {
        if (avail_total_ == 0) break;
        if (std::find(started_.begin(), started_.end(), s) != started_.end()) continue;
        const JobView& js = view.job(s);
        const int granted = jobs_[static_cast<std::size_t>(s)].granted;
        devices_.clear();
        bool placed = false;
        if (pass == 0) {
          placed = granted >= 0 && take(spec, js, granted);
        } else {
          const std::vector<double>& a = class_norm_[static_cast<std::size_t>(class_of(view, s))];
          order_.clear();
          for (int t = 0; t < types_; ++t) {
            if (a[static_cast<std::size_t>(t)] > 0) order_.emplace_back(-a[static_cast<std::size_t>(t)], t);
          }
          std::sort(order_.begin(), order_.end());
          for (const auto& [na, t] : order_) {
            if ((placed = take(spec, js, t))) break;
          }
          // Larger than every type (or runs on none alone): any devices, types mixed.
          if (order_.empty()) placed = take(spec, js, -1);
        }
        if (!placed) continue;
        out.start(s, devices_);
        started_.push_back(s);
        Job& j = jobs_[static_cast<std::size_t>(s)];
        account(j, view.now().us());
        j.on_type = type_of(spec, devices_.front());
      }
    }
    for (JobSlot s : started_) queue_.erase({jobs_[static_cast<std::size_t>(s)].queued_seq, s});
  }

  // `n` available devices of type `t` (-1: any type) into devices_: the fullest node that
  // holds them all, else the emptiest nodes first. Marks them taken.
  bool usable(DeviceId d) const {
    const char m = mark_[static_cast<std::size_t>(d)];
    return m == kReleased || (m == kAsCluster && state_->is_free(d));
  }
  void set_mark(const ClusterSpec& spec, DeviceId d, char m, int delta) {
    if (mark_[static_cast<std::size_t>(d)] == kAsCluster) marked_.push_back(d);
    mark_[static_cast<std::size_t>(d)] = m;
    const int k = spec.node_of(d);
    if (node_delta_[static_cast<std::size_t>(k)] == 0) touched_nodes_.push_back(k);  // may repeat: harmless
    node_delta_[static_cast<std::size_t>(k)] += delta;
    avail_total_ += delta;
    if (type_avail_valid_) type_avail_[static_cast<std::size_t>(spec.node(k).type_index)] += delta;
  }
  void release(const ClusterSpec& spec, const std::vector<DeviceId>& devices) {
    for (DeviceId d : devices) set_mark(spec, d, kReleased, +1);
  }

  // Several datacenters: the job's devices lie in one it may run in, its home first.
  bool take(const ClusterSpec& spec, const JobView& job, int t) {
    if (!geo_) return take(spec, job.num_gpus(), t, -1);
    for (int site : geo_->placement_order(job)) {
      if (take(spec, job.num_gpus(), t, site)) return true;
    }
    return false;
  }

  bool take(const ClusterSpec& spec, int n, int t, int site) {
    if (n > avail_total_) return false;
    node_avail_.clear();
    int total = 0;
    auto visit = [&](int k) {
      if (site >= 0 && geo_->site_of_device(spec.node(k).first_device) != site) return;
      const int f = state_->free_on_node(k) + node_delta_[static_cast<std::size_t>(k)];
      if (f > 0) node_avail_.emplace_back(f, k);
      total += f;
    };
    if (t < 0) {
      for (int k = 0; k < spec.num_nodes(); ++k) visit(k);
    } else {
      // Usable devices by type, counted once per decision and kept up to date by
      // set_mark: a type without room says so in O(1), not after a scan of its nodes.
      if (!type_avail_valid_) {
        type_avail_.assign(static_cast<std::size_t>(types_), 0);
        for (int k = 0; k < spec.num_nodes(); ++k) {
          type_avail_[static_cast<std::size_t>(spec.node(k).type_index)] += state_->free_on_node(k) + node_delta_[static_cast<std::size_t>(k)];
        }
        type_avail_valid_ = true;
      }
      if (type_avail_[static_cast<std::size_t>(t)] < n) return false;
      for (int k : nodes_of_type_[static_cast<std::size_t>(t)]) visit(k);  // in node order, as a scan of all nodes
    }
    if (total < n) return false;
    int best = -1, best_free = 0;
    for (const auto& [f, k] : node_avail_) {
      if (f >= n && (best < 0 || f < best_free)) {
        best = k;
        best_free = f;
      }
    }
    if (best < 0) std::stable_sort(node_avail_.begin(), node_avail_.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (const auto& [f, k] : node_avail_) {
      if (best >= 0 && k != best) continue;
      const NodeSpec& ns = spec.node(k);
      for (DeviceId d = ns.first_device; d < ns.first_device + ns.num_devices && n > 0; ++d) {
        if (!usable(d)) continue;
        set_mark(spec, d, kTaken, -1);
        devices_.push_back(d);
        --n;
      }
      if (n == 0) break;
    }
    return true;
  }

  std::int64_t round_us_;
  std::int64_t round_end_us_ = std::numeric_limits<std::int64_t>::min();
  int types_ = 1;
  std::vector<int> capacity_;                         // devices by type
  std::vector<std::vector<int>> nodes_of_type_;       // by type: its nodes in index order
  std::vector<int> type_avail_;                       // by type: usable devices in this batch (take)
  bool type_avail_valid_ = false;
  std::uint64_t next_seq_ = 0;
  std::set<std::pair<std::uint64_t, JobSlot>> queue_;  // pending jobs in queue order
  std::vector<Job> jobs_;                             // by slot
  static constexpr char kAsCluster = 0, kTaken = 1, kReleased = 2;
  const ClusterState* state_ = nullptr;
  const Geography* geo_ = nullptr;  // several datacenters only
  std::vector<char> mark_;                            // by device: this batch's change
  std::vector<DeviceId> marked_;
  std::vector<int> node_delta_;                       // usable devices by node minus the cluster's free count
  std::vector<int> touched_nodes_;
  int avail_total_ = 0;
  std::vector<JobSlot> live_, started_;
  std::vector<DeviceId> devices_;
  std::vector<std::pair<int, int>> node_avail_;
  std::vector<std::pair<double, int>> order_;
  std::vector<double> a_;
  // Interned classes (class_of): by class id its normalized throughputs and GPU count.
  bool reuse_ = true;
  bool warm_start_ = true;
  GavelCounters* counters_ = nullptr;
  WarmMaxMinLp warm_lp_;
  std::map<std::pair<int, std::vector<double>>, int> class_ids_;
  std::vector<std::vector<double>> class_norm_;
  std::vector<int> class_gpus_;
  std::vector<std::uint64_t> class_key_;  // by class id: class_key (the LP's tie factors)
  std::vector<int> local_class_;      // by class id: its index in this round's LP, -1 = none
  std::vector<int> job_class_;        // by index in live_: the LP class
  std::vector<int> lp_classes_, lp_members_;  // this round's LP: class ids in first-seen order, members
  std::vector<int> lp_gpus_;                  // this round's LP: the classes' GPU counts
  std::vector<std::tuple<double, double, std::uint64_t, JobSlot, int>> cand_;  // new_round's candidates
  std::vector<int> left_;                                                      // new_round's devices left by type
  // The last LP solved and its solution (allocation()).
  bool solved_ = false;
  std::vector<int> last_classes_, last_members_, last_capacity_;
  std::vector<std::vector<double>> last_X_;
  GavelVariant variant_;
  bool solved_once_ = false, changed_ = false;  // reallocate_every_s
  std::int64_t last_solve_us_ = 0;
};

}  // namespace

std::unique_ptr<Policy> make_gavel_policy(const GavelOptions& options) { return std::make_unique<GavelPolicy>(options); }

namespace {
PolicyInfo gavel_info(const std::string& name, const std::string& description, const GavelVariant& d) {
  return PolicyInfo{
      name,
      description,
      {{"round_s", "360", "seconds per scheduling round (Gavel's default is 6 min): allocation, preemptions and moves happen at round boundaries"},
       {"normalize", d.equal_share ? "equal_share" : "best_type",
        "what a job's throughput is divided by in the LP: best_type (its rate on its fastest type) or equal_share (Gavel's LP: its rate on an equal share of every type, times its GPU count)"},
       {"fill_between_rounds", d.fill_between_rounds ? "true" : "false", "start queued jobs on free devices between round boundaries (false: only at boundaries, as Gavel)"},
       {"reallocate_every_s", std::to_string(static_cast<int>(d.reallocate_every_s)),
        "least seconds between two LP solves, which also wait for a job to arrive or finish (Gavel's minimum_time_between_allocation_resets); 0 = a new LP at every round boundary"},
       {"warm_start", "true", "start each LP from the last one's optimal basis (false: every LP from scratch, slower; the run is the same)"}},
      [name, d](const ConfigNode& config, const PolicyContext& /*context*/) {
        config.expect_keys({"name", "round_s", "normalize", "fill_between_rounds", "reallocate_every_s", "warm_start"});
        double round_s = 360;
        if (auto v = config.maybe_child("round_s")) round_s = v->as_positive_double();
        GavelVariant variant = d;
        variant.name = name;
        if (auto v = config.maybe_child("normalize")) variant.equal_share = v->as_choice({"best_type", "equal_share"}) == "equal_share";
        if (auto v = config.maybe_child("fill_between_rounds")) variant.fill_between_rounds = v->as_bool();
        if (auto v = config.maybe_child("reallocate_every_s")) variant.reallocate_every_s = v->as_nonnegative_double();
        if (auto v = config.maybe_child("warm_start")) variant.warm_start = v->as_bool();
        YAML::Node resolved(YAML::NodeType::Map);
        resolved["name"] = name;
        resolved["round_s"] = round_s;
        // The keys added later appear only when they differ from plain gavel's (its resolved config stays as it was).
        if (variant.equal_share) resolved["normalize"] = "equal_share";
        if (!variant.fill_between_rounds) resolved["fill_between_rounds"] = false;
        if (variant.reallocate_every_s > 0) resolved["reallocate_every_s"] = variant.reallocate_every_s;
        if (!variant.warm_start) resolved["warm_start"] = false;
        GavelOptions options;
        options.round_s = round_s;
        auto policy = std::make_unique<GavelPolicy>(options);
        policy->set_variant(variant);
        return PolicyInstance{std::move(policy), resolved};
      },
  };
}
}  // namespace

PolicyInfo gavel_policy_info() {
  return gavel_info("gavel", "Gavel: max-min fairness over throughput normalized by each job's best device type (LP), realized in rounds", GavelVariant{});
}

PolicyInfo gavel_las_policy_info() {
  GavelVariant d;
  d.equal_share = true;
  d.fill_between_rounds = false;
  d.reallocate_every_s = 1920;
  return gavel_info("gavel-las", "Gavel's simulator, max_min_fairness_perf: gavel with Gavel's LP normalization (equal share, times GPUs), jobs started only at round boundaries, the LP solved at most every 1,920 s", d);
}

}  // namespace schedsim
