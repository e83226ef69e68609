// What a job costs in memory, and the two containers that keep it small: SmallString (JobSpec's id
// and workload, 16 bytes) and GrowInPlace (the pending queue's rows, grown with realloc), checked
// against std::string and std::vector as the references.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <random>
#include <sstream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/grow_in_place.h"
#include "core/job.h"
#include "core/small_string.h"

namespace {
using salus::core::GrowInPlace;
using salus::core::JobSpec;
using salus::core::JobState;
using salus::core::SmallString;
}  // namespace

TEST_CASE("a job's spec and state are 112 and 72 bytes (docs/performance.md's bytes per job)") {
  // The rare parts (gpu_kinds, kind_speeds, requests_ns; reason, request latencies) are one
  // pointer each; id and workload 16 bytes each. A field added in line shows here first.
  CHECK(sizeof(SmallString) == 16);
  CHECK(sizeof(JobSpec) == 112);
  CHECK(sizeof(JobState) == 72);
}

TEST_CASE("SmallString holds every length as std::string does, in place up to 15 characters") {
  for (std::size_t n : {0, 1, 7, 14, 15, 16, 17, 31, 100, 5000}) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<char>('a' + i % 26);
    const SmallString a(s);
    CAPTURE(n);
    CHECK(a.size() == n);
    CHECK(a.empty() == (n == 0));
    CHECK(a.view() == s);
    CHECK(std::string(a.c_str()) == s);  // NUL-terminated, in place and on the heap
    CHECK(a.c_str()[n] == '\0');
    CHECK(a.str() == s);
    // Copies and moves, both ways between in-place and heap values.
    SmallString b = a;
    CHECK(b == a);
    SmallString c(std::move(b));
    CHECK(c == a);
    CHECK(b.empty());  // NOLINT(bugprone-use-after-move): a moved-from SmallString is empty
    SmallString d("x");
    d = c;
    CHECK(d == s);
    d = std::move(c);
    CHECK(d == s);
    SmallString e(std::string(40, 'z'));
    e = d;
    CHECK(e == s);
    e = std::string(40, 'y');
    CHECK(e == std::string(40, 'y'));
    SmallString& same = e;
    e = same;  // self-assignment keeps the value
    CHECK(e == std::string(40, 'y'));
    e = e.view().substr(1);  // assigning a view of itself
    CHECK(e == std::string(39, 'y'));
  }
}

TEST_CASE("SmallString compares, orders, hashes and joins as std::string") {
  std::mt19937 rng(7);
  std::vector<std::string> words;
  for (int i = 0; i < 300; ++i) {
    std::string w;
    const int len = static_cast<int>(rng() % 24);
    for (int k = 0; k < len; ++k) w += static_cast<char>('a' + rng() % 3);
    words.push_back(w);
  }
  std::vector<SmallString> small;
  for (const std::string& w : words) small.emplace_back(w);
  for (std::size_t i = 0; i < words.size(); ++i) {
    for (std::size_t j = 0; j < 20; ++j) {
      const std::size_t k = (i * 31 + j * 17) % words.size();
      CHECK((small[i] == small[k]) == (words[i] == words[k]));
      CHECK((small[i] < small[k]) == (words[i] < words[k]));
      CHECK((small[i] == words[k]) == (words[i] == words[k]));
      CHECK((words[k] == small[i]) == (words[i] == words[k]));
    }
    CHECK(std::hash<SmallString>{}(small[i]) == std::hash<std::string_view>{}(words[i]));
    CHECK("<" + small[i] + ">" == "<" + words[i] + ">");
    CHECK(small[i] + '!' == words[i] + '!');
    std::string acc = "id ";
    acc += small[i];
    CHECK(acc == "id " + words[i]);
    std::ostringstream os;
    os << small[i];
    CHECK(os.str() == words[i]);
    CHECK(small[i].find('a') == words[i].find('a'));
  }
  std::vector<SmallString> sorted = small;
  std::sort(sorted.begin(), sorted.end());
  std::sort(words.begin(), words.end());
  CHECK(std::equal(sorted.begin(), sorted.end(), words.begin(), words.end(),
                   [](const SmallString& a, const std::string& b) { return a == b; }));
  std::unordered_set<SmallString> set(small.begin(), small.end());
  CHECK(set.size() == std::set<std::string>(words.begin(), words.end()).size());
}

TEST_CASE("GrowInPlace keeps its rows through growth, copies and moves, as std::vector does") {
  struct Row {
    std::int64_t a;
    std::int32_t b;
  };
  GrowInPlace<Row> g;
  std::vector<Row> v;
  std::mt19937 rng(11);
  for (int i = 0; i < 100'000; ++i) {
    if (!v.empty() && rng() % 4 == 0) {
      g.pop_back();
      v.pop_back();
    } else {
      const Row r{static_cast<std::int64_t>(rng()) << 20, static_cast<std::int32_t>(i)};
      g.push_back(r);
      v.push_back(r);
    }
  }
  auto same = [&](const GrowInPlace<Row>& x) {
    return x.size() == v.size() && std::equal(x.begin(), x.end(), v.begin(), [](const Row& p, const Row& q) {
             return p.a == q.a && p.b == q.b;
           });
  };
  CHECK(same(g));
  GrowInPlace<Row> copy = g;
  CHECK(same(copy));
  GrowInPlace<Row> moved = std::move(copy);
  CHECK(same(moved));
  CHECK(copy.empty());  // NOLINT(bugprone-use-after-move)
  copy = moved;
  CHECK(same(copy));
  g.clear();
  CHECK(g.empty());
}
