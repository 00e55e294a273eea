#include "tools/npy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

namespace et::tools {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

struct Descr {
  std::string_view code;  // without the byte-order character
  ScalarType type;
};

constexpr std::array kDescrs = {
    Descr{"b1", ScalarType::kBool},   Descr{"i1", ScalarType::kChar},
    Descr{"u1", ScalarType::kByte},   Descr{"i2", ScalarType::kShort},
    Descr{"u2", ScalarType::kUInt16}, Descr{"i4", ScalarType::kInt},
    Descr{"u4", ScalarType::kUInt32}, Descr{"i8", ScalarType::kLong},
    Descr{"u8", ScalarType::kUInt64}, Descr{"f2", ScalarType::kHalf},
    Descr{"f4", ScalarType::kFloat},  Descr{"f8", ScalarType::kDouble},
};

// The value of `key` in the header dict: a quoted string, a bool, or a tuple.
Result<std::string_view> dict_value(std::string_view header, std::string_view key) {
  const std::string quoted = fmt::format("'{}'", key);
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) {
    return invalid_argument(fmt::format(".npy header has no '{}' entry", key));
  }
  at = header.find(':', at + quoted.size());
  if (at == std::string_view::npos) return invalid_argument(".npy header dict is malformed");
  size_t start = header.find_first_not_of(' ', at + 1);
  if (start == std::string_view::npos) return invalid_argument(".npy header dict is malformed");
  size_t end;
  if (header[start] == '\'') {
    end = header.find('\'', start + 1);
    if (end == std::string_view::npos) return invalid_argument(".npy header dict is malformed");
    return header.substr(start + 1, end - start - 1);
  }
  if (header[start] == '(') {
    end = header.find(')', start);
    if (end == std::string_view::npos) return invalid_argument(".npy header shape is malformed");
    return header.substr(start + 1, end - start - 1);
  }
  end = header.find_first_of(",}", start);
  if (end == std::string_view::npos) return invalid_argument(".npy header dict is malformed");
  return header.substr(start, end - start);
}

Result<ScalarType> parse_descr(std::string_view descr) {
  if (descr.size() != 3) return invalid_argument(fmt::format("unsupported .npy dtype '{}'", descr));
  const char order = descr[0];
  const std::string_view code = descr.substr(1);
  const bool one_byte = code[1] == '1';
  if (order == '>' && !one_byte) {
    return invalid_argument(fmt::format(
        ".npy dtype '{}' is big-endian: save the array as little-endian ('<{}')", descr, code));
  }
  if (order != '<' && order != '|' && order != '=' && !(order == '>' && one_byte)) {
    return invalid_argument(fmt::format("unsupported .npy dtype '{}'", descr));
  }
  for (const Descr& d : kDescrs) {
    if (d.code == code) return d.type;
  }
  return invalid_argument(fmt::format("unsupported .npy dtype '{}'", descr));
}

Result<std::vector<int64_t>> parse_shape(std::string_view text) {
  std::vector<int64_t> shape;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size()) break;
    int64_t v = 0;
    bool any = false;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (v > (int64_t{1} << 40)) return invalid_argument(".npy shape entry is too large");
      v = v * 10 + (text[i] - '0');
      ++i;
      any = true;
    }
    if (!any) return invalid_argument(fmt::format(".npy shape '({})' is malformed", text));
    shape.push_back(v);
  }
  return shape;
}

std::string_view descr_of(ScalarType type) {
  switch (type) {
    case ScalarType::kBool:
      return "|b1";
    case ScalarType::kChar:
      return "|i1";
    case ScalarType::kByte:
      return "|u1";
    case ScalarType::kShort:
      return "<i2";
    case ScalarType::kUInt16:
    case ScalarType::kBFloat16:  // bit patterns
      return "<u2";
    case ScalarType::kInt:
      return "<i4";
    case ScalarType::kUInt32:
      return "<u4";
    case ScalarType::kLong:
      return "<i8";
    case ScalarType::kUInt64:
      return "<u8";
    case ScalarType::kHalf:
      return "<f2";
    case ScalarType::kFloat:
      return "<f4";
    case ScalarType::kDouble:
      return "<f8";
    default:
      return "";
  }
}

// Converts Fortran order (first index fastest) to C order.
std::vector<uint8_t> fortran_to_c(const std::vector<uint8_t>& src,
                                  const std::vector<int64_t>& shape, size_t elsize) {
  std::vector<uint8_t> dst(src.size());
  const size_t rank = shape.size();
  std::vector<int64_t> index(rank, 0);
  const size_t n = elsize == 0 ? 0 : src.size() / elsize;
  for (size_t c = 0; c < n; ++c) {
    size_t f = 0, stride = 1;
    for (size_t d = 0; d < rank; ++d) {
      f += static_cast<size_t>(index[d]) * stride;
      stride *= static_cast<size_t>(shape[d]);
    }
    std::memcpy(dst.data() + c * elsize, src.data() + f * elsize, elsize);
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
  return dst;
}

}  // namespace

Result<NpyArray> parse_npy(std::span<const uint8_t> bytes) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    return invalid_argument("not a .npy file (no \\x93NUMPY magic)");
  }
  const uint8_t major = bytes[6];
  size_t header_len, header_start;
  if (major == 1) {
    header_len = bytes[8] | (size_t{bytes[9]} << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return invalid_argument(".npy header is truncated");
    header_len =
        bytes[8] | (size_t{bytes[9]} << 8) | (size_t{bytes[10]} << 16) | (size_t{bytes[11]} << 24);
    header_start = 12;
  } else {
    return invalid_argument(fmt::format("unsupported .npy format version {}", major));
  }
  if (header_start + header_len > bytes.size()) return invalid_argument(".npy header is truncated");
  std::string_view header(reinterpret_cast<const char*>(bytes.data()) + header_start, header_len);

  ET_ASSIGN_OR_RETURN(std::string_view descr, dict_value(header, "descr"));
  ET_ASSIGN_OR_RETURN(std::string_view fortran, dict_value(header, "fortran_order"));
  ET_ASSIGN_OR_RETURN(std::string_view shape_text, dict_value(header, "shape"));

  NpyArray out;
  ET_ASSIGN_OR_RETURN(out.dtype, parse_descr(descr));
  ET_ASSIGN_OR_RETURN(out.shape, parse_shape(shape_text));
  const size_t elsize = element_size(out.dtype);
  uint64_t nbytes = elsize;
  for (int64_t s : out.shape) {
    if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(s), &nbytes)) {
      return invalid_argument(".npy shape is too large");
    }
  }
  const size_t payload = header_start + header_len;
  if (bytes.size() - payload < nbytes) {
    return invalid_argument(fmt::format(".npy payload has {} bytes; shape ({}) of {} needs {}",
                                        bytes.size() - payload, fmt::join(out.shape, ", "), descr,
                                        nbytes));
  }
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(payload),
                  bytes.begin() + static_cast<std::ptrdiff_t>(payload + nbytes));
  if (fortran == "True" && out.shape.size() > 1)
    out.data = fortran_to_c(out.data, out.shape, elsize);
  return out;
}

Result<NpyArray> read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(fmt::format("cannot open '{}'", path));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  auto array = parse_npy(bytes);
  if (!array.ok()) return array.status().with_context(path);
  return array;
}

Status write_npy(const std::string& path, ScalarType dtype, std::span<const int64_t> shape,
                 const void* data) {
  const std::string_view descr = descr_of(dtype);
  if (descr.empty()) {
    return not_supported(fmt::format("cannot write {} to .npy", scalar_type_name(dtype)));
  }
  std::string shape_text;
  for (int64_t s : shape) shape_text += fmt::format("{}, ", s);
  if (shape.size() > 1) shape_text.resize(shape_text.size() - 2);
  if (shape.size() == 1) shape_text.resize(shape_text.size() - 1);  // "(3,)"
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape_text);
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return io_error(fmt::format("cannot write '{}'", path));
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write(kMagic.data(), static_cast<std::streamsize>(kMagic.size()));
  out.put(1);
  out.put(0);
  out.put(static_cast<char>(len & 0xff));
  out.put(static_cast<char>(len >> 8));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  size_t nbytes = element_size(dtype);
  for (int64_t s : shape) nbytes *= static_cast<size_t>(s);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(nbytes));
  if (!out) return io_error(fmt::format("writing '{}' failed", path));
  return Status();
}

}  // namespace et::tools
