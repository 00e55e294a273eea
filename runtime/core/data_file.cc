#include "runtime/core/data_file.h"

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>

#include "runtime/core/printable.h"
#include "runtime/core/tensor.h"
#include "runtime/schema/flat_tensor_generated.h"

namespace et {
namespace {

constexpr size_t kIdentifierOffset = 4;
constexpr size_t kHeaderOffset = 8;
constexpr std::string_view kHeaderMagic = "FH01";
// magic, length, flatbuffer offset and size, segment base offset, segment data size
constexpr uint32_t kHeaderMinimumLength = 4 + 4 + 8 + 8 + 8 + 8;
constexpr flatbuffers::uoffset_t kMaxDepth = 16;
constexpr flatbuffers::uoffset_t kMaxTables = 10'000'000;

uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);  // little-endian, as is every supported host
  return v;
}

bool fits(uint64_t a, uint64_t b, uint64_t limit) { return a <= limit && b <= limit - a; }

struct Header {
  uint64_t flatbuffer_end = 0;  // flatbuffer offset + size: the flatbuffer is [0, end)
  uint64_t segment_base = 0;
  uint64_t segment_size = 0;
};

Result<Header> parse_header(std::span<const uint8_t> file) {
  if (file.size() < kHeaderOffset) {
    return invalid_program(
        fmt::format("file is {} bytes; a .ptd needs at least {}: truncated or not a data file",
                    file.size(), kHeaderOffset));
  }
  const std::string_view id(reinterpret_cast<const char*>(file.data()) + kIdentifierOffset, 4);
  if (id != kDataFileIdentifier) {
    if (id.substr(0, 2) == "ET") {
      return invalid_argument(
          fmt::format("this is a program ('{}'), not its external data file: pass the .ptd "
                      "that was written beside it",
                      printable(id)));
    }
    if (id.substr(0, 2) == "FT") {
      return incompatible_version(
          fmt::format("external data format '{}' is not the '{}' this runtime reads: re-export "
                      "with an ExecuTorch release that writes '{}'",
                      printable(id), kDataFileIdentifier, kDataFileIdentifier));
    }
    return invalid_argument(
        fmt::format("not an ExecuTorch data file: bytes 4..7 are '{}' where a .ptd has '{}'",
                    printable(id), kDataFileIdentifier));
  }
  const uint8_t* h = file.data() + kHeaderOffset;
  if (file.size() < kHeaderOffset + kHeaderMinimumLength ||
      std::string_view(reinterpret_cast<const char*>(h), 4) != kHeaderMagic) {
    return invalid_program("the .ptd has no 'FH01' header at byte 8: the file is truncated");
  }
  uint32_t length;
  std::memcpy(&length, h + 4, sizeof length);
  if (length < kHeaderMinimumLength || !fits(kHeaderOffset, length, file.size())) {
    return invalid_program(fmt::format(
        "the .ptd header says it is {} bytes: at least {} and inside the {}-byte file needed",
        length, kHeaderMinimumLength, file.size()));
  }
  const uint64_t fb_offset = load_u64(h + 8), fb_size = load_u64(h + 16);
  Header header;
  header.segment_base = load_u64(h + 24);
  header.segment_size = load_u64(h + 32);
  if (!fits(fb_offset, fb_size, file.size())) {
    return invalid_program(fmt::format(
        "the .ptd's flatbuffer ({} bytes at {}) does not fit the {}-byte file: it is truncated",
        fb_size, fb_offset, file.size()));
  }
  header.flatbuffer_end = fb_offset + fb_size;
  if (!fits(header.segment_base, header.segment_size, file.size())) {
    return invalid_program(fmt::format(
        "the .ptd's segment data ({} bytes at {}) does not fit the {}-byte file: it is truncated",
        header.segment_size, header.segment_base, file.size()));
  }
  return header;
}

template <typename T>
size_t length(const flatbuffers::Vector<T>* v) {
  return v == nullptr ? 0 : v->size();
}

Result<DataLayout> read_layout(const fbd::TensorLayout& l, size_t available) {
  DataLayout layout;
  ET_ASSIGN_OR_RETURN(layout.dtype, scalar_type_from_code(l.scalar_type()));
  if (l.sizes()) layout.sizes.assign(l.sizes()->begin(), l.sizes()->end());
  if (l.dim_order()) {
    layout.dim_order.assign(l.dim_order()->begin(), l.dim_order()->end());
  } else {
    for (size_t d = 0; d < layout.sizes.size(); ++d) layout.dim_order.push_back(uint8_t(d));
  }
  ET_RETURN_IF_ERROR(Tensor::validate_shape(layout.sizes, layout.dim_order));
  uint64_t nbytes = element_size(layout.dtype);
  for (int32_t s : layout.sizes) {
    if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(s), &nbytes)) {
      return invalid_argument("its sizes overflow the byte count");
    }
  }
  if (nbytes > available) {
    return invalid_argument(fmt::format("a {} [{}] tensor needs {} bytes; its segment has {}",
                                        scalar_type_name(layout.dtype),
                                        fmt::join(layout.sizes, ", "), nbytes, available));
  }
  return layout;
}

}  // namespace

Result<std::shared_ptr<const DataFile>> DataFile::load(std::shared_ptr<const ProgramBytes> bytes) {
  if (bytes == nullptr) return invalid_argument("no data file bytes");
  const std::span<const uint8_t> file = bytes->bytes();
  ET_ASSIGN_OR_RETURN(Header header, parse_header(file));
  if (header.flatbuffer_end >= FLATBUFFERS_MAX_BUFFER_SIZE) {
    return invalid_program(fmt::format("the .ptd's flatbuffer is {} bytes; at most {} are read",
                                       header.flatbuffer_end, FLATBUFFERS_MAX_BUFFER_SIZE - 1));
  }
  flatbuffers::Verifier::Options options;
  options.max_depth = kMaxDepth;
  options.max_tables = kMaxTables;
  flatbuffers::Verifier verifier(file.data(), header.flatbuffer_end, options);
  if (!verifier.VerifyBuffer<fbd::FlatTensor>(kDataFileIdentifier.data())) {
    return invalid_program(
        "the .ptd's flatbuffer is malformed (a table, vector or string lies outside it or is "
        "misaligned): the file is corrupt or truncated");
  }
  const fbd::FlatTensor* root = flatbuffers::GetRoot<fbd::FlatTensor>(file.data());
  const size_t n_segments = length(root->segments());
  for (uint32_t i = 0; i < n_segments; ++i) {
    const fbd::DataSegment* s = root->segments()->Get(i);
    if (!fits(s->offset(), s->size(), header.segment_size)) {
      return invalid_program(
          fmt::format("the .ptd's segment {} ({} bytes at {}) lies outside its {} bytes of "
                      "segment data",
                      i, s->size(), s->offset(), header.segment_size));
    }
  }
  auto data = std::shared_ptr<DataFile>(new DataFile());
  for (uint32_t i = 0; i < length(root->named_data()); ++i) {
    const fbd::NamedData* d = root->named_data()->Get(i);
    if (d->key() == nullptr) {
      return invalid_program(fmt::format("the .ptd's named data {} has no key", i));
    }
    const std::string_view key = d->key()->string_view();
    if (d->segment_index() >= n_segments) {
      return invalid_program(fmt::format("the .ptd's '{}' is in segment {}; the file has {}",
                                         printable(key), d->segment_index(), n_segments));
    }
    const fbd::DataSegment* s = root->segments()->Get(d->segment_index());
    Entry entry;
    entry.bytes = file.subspan(header.segment_base + s->offset(), s->size());
    if (d->tensor_layout() != nullptr) {
      Result<DataLayout> layout = read_layout(*d->tensor_layout(), entry.bytes.size());
      if (!layout.ok()) {
        return invalid_program(fmt::format("the .ptd's layout for '{}' is wrong: {}",
                                           printable(key), layout.status().message()));
      }
      entry.layout = std::move(layout).value();
    }
    if (!data->entries_.emplace(std::string(key), std::move(entry)).second) {
      return invalid_program(fmt::format("the .ptd has two blobs named '{}'", printable(key)));
    }
  }
  data->bytes_ = std::move(bytes);
  return std::shared_ptr<const DataFile>(std::move(data));
}

Result<std::shared_ptr<const DataFile>> DataFile::load_file(const std::string& path) {
  ET_ASSIGN_OR_RETURN(auto bytes, ProgramBytes::map_file(path));
  auto data = load(std::move(bytes));
  if (!data.ok()) return data.status().with_context(path);
  return data;
}

Result<std::span<const uint8_t>> DataFile::find(std::string_view key) const {
  if (auto it = entries_.find(key); it != entries_.end()) return it->second.bytes;
  return not_found(fmt::format("the data file has no '{}' (it holds {} named blobs)",
                               printable(key), entries_.size()));
}

const DataLayout* DataFile::layout(std::string_view key) const {
  auto it = entries_.find(key);
  if (it == entries_.end() || !it->second.layout) return nullptr;
  return &*it->second.layout;
}

std::vector<std::string_view> DataFile::keys() const {
  std::vector<std::string_view> out;
  for (const auto& [key, entry] : entries_) out.push_back(key);
  return out;
}

}  // namespace et
