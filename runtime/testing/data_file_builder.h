// Builds small synthetic .ptd external data files for tests, laid out as ExecuTorch
// writes them: the flatbuffer with an 'FH01' header inserted at byte 8, then the
// segment data. Test-only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/scalar_type.h"

namespace et::testing {

class DataFileBuilder {
 public:
  struct Layout {
    int8_t scalar_type = static_cast<int8_t>(ScalarType::kFloat);
    std::vector<int32_t> sizes;
  };
  // Adds a blob in a segment of its own (segment index = number of blobs before).
  void add(std::string key, std::vector<uint8_t> bytes, std::optional<Layout> layout = {});
  // Adds a float tensor blob with its layout.
  void add_floats(std::string key, const std::vector<float>& values, std::vector<int32_t> sizes);
  // Another key naming blob `segment`'s bytes.
  void alias(std::string key, uint32_t segment) { aliases_.emplace_back(std::move(key), segment); }

  std::vector<uint8_t> finish() const;

 private:
  struct Blob {
    std::string key;
    std::vector<uint8_t> bytes;
    std::optional<Layout> layout;
  };
  std::vector<Blob> blobs_;
  std::vector<std::pair<std::string, uint32_t>> aliases_;
};

}  // namespace et::testing
