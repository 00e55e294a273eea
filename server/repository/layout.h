// What a model repository directory holds (docs/operations.md), in either of two layouts:
// - flat: DIR/NAME.pte, with DIR/NAME.ptd beside it as its external data file;
// - Triton's: DIR/NAME/VERSION/model.pte (model.ptd beside it), VERSION a positive
//   integer; other files (config.pbtxt, README) are ignored.
// A bundled program serves as its program: NAME.bpte or model.bpte in place of the
// .pte (NAME.pte wins over NAME.bpte, with a problem reported).
// A directory may mix them; a flat NAME.pte beside a Triton directory NAME is shadowed
// by the directory.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/status.h"

namespace et::server::repository {

// A file's identity and state: a file replaced, rewritten or touched differs.
struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
// The stamp of `path` (following links); IoError when it cannot be read.
Result<FileStamp> stamp_of(const std::string& path);

struct ProgramFile {
  std::string model;      // NAME
  uint64_t version = 0;   // the Triton version directory; 0 in the flat layout
  std::string path;       // the .pte (or .bpte)
  std::string data_path;  // the .ptd, or empty
  bool flat() const { return version == 0; }
};

struct Listing {
  // Sorted by model, then newest version first.
  std::vector<ProgramFile> files;
  // What could not be a model (a name with a path separator's worth of trouble, a
  // shadowed flat file), each a sentence for the log.
  std::vector<std::string> problems;
};

// Whether `name` may name a model: 1 to 255 bytes, no '/', no NUL, not hidden.
bool valid_model_name(const std::string& name);

// Lists `dir`. IoError when `dir` cannot be read (a model directory that cannot be
// read is a problem, not an error).
Result<Listing> list_repository(const std::string& dir);

}  // namespace et::server::repository
