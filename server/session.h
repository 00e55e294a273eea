// One client connection's state: its programs, method instances and segments.
// Everything here is released when the session ends (ServiceCore::close_session).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/method.h"
#include "server/program_registry.h"
#include "server/segment.h"
#include "server/tensor_codec.h"

namespace et::server {

// A method instance and what its bound inputs point into. `run_mu` makes sure one
// instance never runs on two threads at once.
struct MethodSlot {
  std::timed_mutex run_mu;
  std::unique_ptr<Method> method;                    // GUARDED_BY(run_mu)
  std::shared_ptr<const RegisteredProgram> program;  // keeps the program loaded
  std::vector<DecodedInput> inputs;                  // GUARDED_BY(run_mu)
  std::vector<std::vector<uint8_t>> output_buffers;  // unplanned outputs; GUARDED_BY(run_mu)
};

struct Session {
  uint64_t number = 0;
  std::string token;
  std::string client_name;

  std::mutex mu;
  bool closed = false;   // GUARDED_BY(mu)
  uint64_t next_id = 1;  // GUARDED_BY(mu): ids of programs, methods and segments
  std::map<uint64_t, std::shared_ptr<const RegisteredProgram>> programs;  // GUARDED_BY(mu)
  std::map<uint64_t, std::shared_ptr<MethodSlot>> methods;                // GUARDED_BY(mu)
  std::map<uint64_t, std::shared_ptr<Segment>> segments;                  // GUARDED_BY(mu)
  size_t segment_bytes = 0;                                               // GUARDED_BY(mu)
};

}  // namespace et::server
