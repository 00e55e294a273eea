// A loaded, verified .pte program: immutable, shareable by every method instance
// and every thread.
//
// Program::load() verifies the whole file before returning: the container, the
// flatbuffer, and every index, offset and size any later step reads through. After
// a successful load, method loading and execution never read outside the bytes.
//
// Ownership: the Program holds its ProgramBytes; constants and delegate payloads
// point into them. A Method holds a shared_ptr to its Program.
// Thread-safety: all const methods may be called concurrently; backend_cache() is
// internally synchronised.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "port/mutex.h"
#include "runtime/core/bundled_program.h"
#include "runtime/core/data_file.h"
#include "runtime/core/method_meta.h"
#include "runtime/core/program_bytes.h"
#include "runtime/core/pte_header.h"
#include "runtime/core/status.h"

namespace et {

namespace fb {
struct Program;
struct ExecutionPlan;
struct BackendDelegate;
}  // namespace fb

// Work a backend does once per program (parsed graphs, packed weights), shared by
// every method instance. Keyed by (backend id, delegate payload identity).
class BackendCache {
 public:
  // Returns the cached object for `key`, building it with `make` on first use.
  // `make` runs at most once per key, under the cache's lock; a failure is not cached.
  Result<std::shared_ptr<const void>> get_or_create(
      const std::string& key,
      const std::function<Result<std::shared_ptr<const void>>()>& make) const;
  size_t size() const;

 private:
  mutable Mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const void>> entries_ ET_GUARDED_BY(mu_);
};

class Program {
 public:
  // Verifies and loads a program from its bytes, with `data`, the external data file
  // (.ptd) it was exported with, when it keeps tensors there (nullptr: none). A bundled
  // program (.bpte) loads as the program it carries, its test cases kept
  // (bundled_tests()); a corrupt bundle is InvalidProgram naming what is wrong.
  // Errors: every container error of parse_pte_header(), InvalidProgram naming the
  // first inconsistency found, InvalidArgument for a program that needs a .ptd and got
  // none or a .ptd that lacks or mismatches one of its tensors (naming it),
  // NotSupported for valid features this runtime lacks (unbounded dynamic shapes).
  static Result<std::shared_ptr<const Program>> load(std::shared_ptr<const ProgramBytes> bytes,
                                                     std::shared_ptr<const DataFile> data = {});

  // Maps `path` (and `data_path` unless empty) and loads it. Errors: IoError, plus
  // those of load() and DataFile::load(), naming the file.
  static Result<std::shared_ptr<const Program>> load_file(const std::string& path,
                                                          const std::string& data_path = {});

  size_t num_methods() const { return metas_.size(); }
  std::vector<std::string> method_names() const;
  // NotFound naming the method and listing the ones that exist.
  Result<const MethodMeta*> method_meta(std::string_view name) const;

  uint32_t version() const;
  // The test cases of a bundled program (.bpte); nullptr for a plain .pte.
  const std::shared_ptr<const BundledTests>& bundled_tests() const { return bundled_; }
  std::span<const uint8_t> bytes() const { return bytes_->bytes(); }
  const std::shared_ptr<const ProgramBytes>& shared_bytes() const { return bytes_; }
  const BackendCache& backend_cache() const { return backend_cache_; }

  // --- For the runtime's own use (Method, backends). Valid only after load().
  const fb::Program* flatbuffer() const { return root_; }
  Result<const fb::ExecutionPlan*> plan(std::string_view name) const;
  // Verified constant bytes of tensor data index `index` (at least `nbytes` long).
  std::span<const uint8_t> constant_data(uint32_t index) const;
  // Initial bytes of a mutable buffer whose data index is `index`.
  std::span<const uint8_t> mutable_initial_data(uint32_t index) const;
  std::span<const uint8_t> segment(uint32_t index) const;
  // The delegate's processed payload (inline or in a segment).
  std::span<const uint8_t> delegate_payload(const fb::BackendDelegate& delegate) const;
  // The named data blob `key` (the program's own first, then its data file's), or NotFound.
  Result<std::span<const uint8_t>> named_data(std::string_view key) const;
  // The verified bytes of an external tensor, by its fully qualified name.
  // REQUIRES: the program has a tensor of that name kept in external data, and was
  // loaded with its data file (check_data_given() passed for the method reading it).
  std::span<const uint8_t> external_data(std::string_view name) const;
  // InvalidArgument naming the first tensor a method (`method`, or any when empty) keeps
  // in an external data file when the program was loaded without one: such a method
  // refuses to load. OK otherwise.
  Status check_data_given(std::string_view method = {}) const;
  // The external data file the program was loaded with, or nullptr.
  const std::shared_ptr<const DataFile>& data_file() const { return data_; }

 private:
  Program() = default;
  static Result<std::shared_ptr<Program>> load_plain(std::shared_ptr<const ProgramBytes> bytes,
                                                     std::shared_ptr<const DataFile> data);
  Status build_metas();

  std::shared_ptr<const ProgramBytes> bytes_;
  std::shared_ptr<const DataFile> data_;
  std::shared_ptr<const BundledTests> bundled_;
  PteHeader header_;
  const fb::Program* root_ = nullptr;
  std::vector<MethodMeta> metas_;
  BackendCache backend_cache_;
};

}  // namespace et
