#pragma once
/// Shared by the trace importer tests: the fixtures' folder, the default catalog (loaded once) and
/// a look-up of an exact `note:` sentence among a trace's notes.
#include <algorithm>
#include <string>

#include "traces/catalog.h"
#include "traces/trace.h"

namespace salus::test {

inline const std::string kImportDir = SALUS_TEST_DATA_DIR "/traces/import/";

inline const traces::Catalog& default_catalog() {
  static const traces::Catalog c = traces::Catalog::load_default();
  return c;
}

inline bool has_note(const traces::Trace& t, const std::string& text) {
  return std::find(t.notes.begin(), t.notes.end(), text) != t.notes.end();
}

}  // namespace salus::test
