// Loading the exported fixture programs (tests/models) in tests. Header-only: it uses
// ET_FIXTURES_DIR, which test targets define (cmake/EtTesting.cmake).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "runtime/core/program.h"

namespace et::testing {

inline std::string fixture_path(const std::string& file) {
  return std::string(ET_FIXTURES_DIR) + "/" + file;
}

// The program in tests/models/<file> (with its external data file tests/models/<data>
// unless empty); a load failure fails the calling test.
inline std::shared_ptr<const Program> fixture(const std::string& file,
                                              const std::string& data = {}) {
  auto p = Program::load_file(fixture_path(file), data.empty() ? data : fixture_path(data));
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return p.ok() ? *p : nullptr;
}

}  // namespace et::testing
