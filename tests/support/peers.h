#pragma once
// The peers' per-job results committed under tests/data/peers (scripts/peers/, docs/peers.md).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace salus::test {

struct PeerJob {
  double start_s = 0, end_s = 0;
};

/// A fixture of tests/data/peers (`#` comment lines, then a CSV with job_id, start_s and end_s
/// columns): job_id -> (start_s, end_s).
inline std::map<std::string, PeerJob> peer_jobs(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::map<std::string, PeerJob> out;
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    if (header.empty()) {
      header = cells;
      continue;
    }
    auto at = [&](const std::string& name) {
      const auto it = std::find(header.begin(), header.end(), name);
      REQUIRE(it != header.end());
      return cells.at(static_cast<std::size_t>(it - header.begin()));
    };
    out[at("job_id")] = {std::stod(at("start_s")), std::stod(at("end_s"))};
  }
  return out;
}

}  // namespace salus::test
