#include "runtime/testing/data_file_builder.h"

#include <flatbuffers/flatbuffers.h>

#include <cstring>

#include "runtime/schema/flat_tensor_generated.h"

namespace et::testing {
namespace {

constexpr size_t kAlignment = 16;

size_t aligned(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

void put_u32(std::vector<uint8_t>& out, size_t at, uint32_t v) { std::memcpy(&out[at], &v, 4); }
void put_u64(std::vector<uint8_t>& out, size_t at, uint64_t v) { std::memcpy(&out[at], &v, 8); }

}  // namespace

void DataFileBuilder::add(std::string key, std::vector<uint8_t> bytes,
                          std::optional<Layout> layout) {
  blobs_.push_back({std::move(key), std::move(bytes), std::move(layout)});
}

void DataFileBuilder::add_floats(std::string key, const std::vector<float>& values,
                                 std::vector<int32_t> sizes) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  add(std::move(key), std::move(bytes), Layout{static_cast<int8_t>(ScalarType::kFloat), sizes});
}

std::vector<uint8_t> DataFileBuilder::finish() const {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fbd::DataSegment>> segments;
  std::vector<flatbuffers::Offset<fbd::NamedData>> named;
  std::vector<uint8_t> data;
  for (uint32_t i = 0; i < blobs_.size(); ++i) {
    const Blob& blob = blobs_[i];
    data.resize(aligned(data.size()));
    segments.push_back(fbd::CreateDataSegment(b, data.size(), blob.bytes.size()));
    data.insert(data.end(), blob.bytes.begin(), blob.bytes.end());
    flatbuffers::Offset<fbd::TensorLayout> layout = 0;
    if (blob.layout) {
      std::vector<uint8_t> order;
      for (size_t d = 0; d < blob.layout->sizes.size(); ++d) order.push_back(uint8_t(d));
      layout =
          fbd::CreateTensorLayoutDirect(b, blob.layout->scalar_type, &blob.layout->sizes, &order);
    }
    named.push_back(fbd::CreateNamedDataDirect(b, blob.key.c_str(), i, layout));
  }
  for (const auto& [key, segment] : aliases_) {
    named.push_back(fbd::CreateNamedDataDirect(b, key.c_str(), segment));
  }
  b.Finish(fbd::CreateFlatTensorDirect(b, 0, &segments, &named), "FT01");
  const std::vector<uint8_t> flat(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());

  // Insert the header at byte 8; the root offset (byte 0) now points past it.
  constexpr size_t kHeaderLength = 40;
  const size_t padded_header = aligned(kHeaderLength);
  std::vector<uint8_t> out(flat.begin(), flat.begin() + 8);
  out.resize(8 + padded_header);
  out.insert(out.end(), flat.begin() + 8, flat.end());
  uint32_t root;
  std::memcpy(&root, flat.data(), 4);
  put_u32(out, 0, root + static_cast<uint32_t>(padded_header));
  std::memcpy(&out[8], "FH01", 4);
  put_u32(out, 12, kHeaderLength);
  put_u64(out, 16, padded_header);               // flatbuffer offset
  put_u64(out, 24, out.size() - padded_header);  // flatbuffer size
  const size_t base = aligned(out.size());
  put_u64(out, 32, base);         // segment base offset
  put_u64(out, 40, data.size());  // segment data size
  out.resize(base);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

}  // namespace et::testing
