// example_tuner.cpp: an example tuner in C++ for the BAT protocol: random search or local search.
//
// Build:  g++ -std=c++17 -O2 -o build/bat_example_tuner bat/protocol/cpp/example_tuner.cpp
// Run:    bat run --benchmark gemm --tuner exec:./build/bat_example_tuner -- --strategy local
// Options: --strategy random|local (default local); --single: evaluate one configuration per
//          request instead of a batch (the same evaluations, for measuring the protocol).
//
// The strategies are those of tuner_adapters/portable_search.py, step for step
// (its docstring is the specification): every choice follows from the hello
// reply's seed, through SplitMix64, and from the server's replies, so this
// program and the Python module give the same trace for the same seed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bat_client.hpp"

namespace {

constexpr std::size_t kChunk = 32;  // candidates drawn per validity question (random search)
constexpr double kInf = std::numeric_limits<double>::infinity();

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t state_;
};

class Search {
 public:
  Search(bat::Client& client, const bat::Problem& problem, bool single)
      : client_(client), rng_(problem.seed), single_(single) {
    for (const auto& p : problem.parameters) radices_.push_back(p.values.size());
    valid_count_ = static_cast<std::size_t>(problem.valid_configurations);
    cardinality_ = static_cast<std::size_t>(problem.cardinality);
  }

  void random() {
    while (!done()) {
      std::size_t want = std::min(kChunk, cardinality_ - fitness_.size() - invalid_.size());
      std::vector<bat::Config> candidates;
      std::set<bat::Config> drawn;
      while (candidates.size() < want) {
        bat::Config key = draw();
        if (!known(key) && drawn.insert(key).second) candidates.push_back(key);
      }
      evaluate_valid(candidates);
    }
  }

  void local() {
    bool have_current = false;
    bat::Config current;
    while (!done()) {
      if (!have_current) {
        current = start();
        evaluate(current);
        have_current = true;
        continue;
      }
      std::vector<bat::Config> around = neighbours(current);
      std::vector<bat::Config> unknown;
      for (const auto& key : around)
        if (!fitness_.count(key)) unknown.push_back(key);
      evaluate_valid(unknown);
      double best_fitness = fitness_.at(current);
      const bat::Config* best = nullptr;
      for (const auto& key : around) {
        auto it = fitness_.find(key);
        if (it != fitness_.end() && it->second < best_fitness) {
          best = &key;
          best_fitness = it->second;
        }
      }
      if (best == nullptr) {
        have_current = false;  // a local optimum: restart
      } else {
        current = *best;
      }
    }
  }

 private:
  bool done() const { return client_.exhausted() || fitness_.size() >= valid_count_; }
  bool known(const bat::Config& key) const { return fitness_.count(key) || invalid_.count(key); }

  bat::Config draw() {
    bat::Config key(radices_.size());
    for (std::size_t j = 0; j < radices_.size(); ++j) key[j] = rng_.below(radices_[j]);
    return key;
  }

  void evaluate(const bat::Config& key) { fitness_[key] = client_.evaluate(key).fitness(); }

  // Ask which of `keys` are valid; evaluate those in one batch (it stops where the budget does).
  void evaluate_valid(const std::vector<bat::Config>& keys) {
    if (keys.empty()) return;
    std::vector<bool> flags = client_.valid(keys);
    std::vector<bat::Config> fresh;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (flags[i]) fresh.push_back(keys[i]);
      else invalid_.insert(keys[i]);
    }
    if (fresh.empty()) return;
    if (single_) {  // the same evaluations, one request each
      for (const auto& key : fresh) {
        if (client_.exhausted()) return;
        evaluate(key);
      }
      return;
    }
    std::vector<bat::Result> results = client_.batch(fresh);
    for (std::size_t i = 0; i < results.size(); ++i)
      if (!results[i].refused()) fitness_[fresh[i]] = results[i].fitness();
  }

  bat::Config start() {
    while (true) {
      bat::Config key = draw();
      if (known(key)) continue;
      if (client_.valid({key})[0]) return key;
      invalid_.insert(key);
    }
  }

  std::vector<bat::Config> neighbours(const bat::Config& key) const {
    std::vector<bat::Config> out;
    for (std::size_t j = 0; j < radices_.size(); ++j) {
      for (int step : {-1, 1}) {
        long long i = static_cast<long long>(key[j]) + step;
        if (i < 0 || i >= static_cast<long long>(radices_[j])) continue;
        bat::Config next = key;
        next[j] = static_cast<std::size_t>(i);
        if (!invalid_.count(next)) out.push_back(next);
      }
    }
    return out;
  }

  bat::Client& client_;
  SplitMix64 rng_;
  bool single_;
  std::vector<std::size_t> radices_;
  std::size_t valid_count_ = 0, cardinality_ = 0;
  std::map<bat::Config, double> fitness_;
  std::set<bat::Config> invalid_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string strategy = "local";
  bool single = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--strategy" && i + 1 < argc) {
      strategy = argv[++i];
    } else if (arg == "--single") {
      single = true;
    } else {
      std::cerr << "usage: " << argv[0] << " [--strategy random|local] [--single]\n";
      return 2;
    }
  }
  if (strategy != "random" && strategy != "local") {
    std::cerr << argv[0] << ": --strategy must be random or local, not " << strategy << "\n";
    return 2;
  }
  try {
    bat::Client client = bat::Client::stdio();
    const bat::Problem& problem = client.hello("bat_example_tuner " + strategy + " (C++)");
    Search search(client, problem, single);
    if (strategy == "random") search.random();
    else search.local();
    client.done();
  } catch (const std::exception& e) {
    std::cerr << argv[0] << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
