// Method instances: loading one into a session (or for a caller that holds it), its
// output buffers, dropping it.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "server/core/core.h"
#include "server/core/core_internal.h"
#include "server/core/zero_run.h"

namespace et::server {

Result<Core::LoadedMethod> Core::load_method(const std::string& token, uint64_t program_id,
                                             const std::string& method_name) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(token));
  ET_ASSIGN_OR_RETURN(CallCount counted, CallCount::start(*this, *s));
  ET_ASSIGN_OR_RETURN(std::shared_ptr<const SharedProgram> p, program_for(*s, program_id));
  const std::string name = method_name.empty() ? "forward" : method_name;
  auto too_many_methods = [&]() ET_REQUIRES(s->mu) -> Status {
    if (s->methods.size() < limits_.max_methods_per_session) return Status();
    return resource_exhausted(fmt::format(
        "this session holds {} methods, its limit (--max-methods); drop one or raise it",
        s->methods.size()));
  };
  {
    MutexLock lock(s->mu);
    ET_RETURN_IF_ERROR(too_many_methods());
  }
  auto method = Method::load(p->program, name, method_options());
  if (!method.ok()) return method.status().with_context("method_name");
  auto slot = std::make_shared<MethodSlot>();
  slot->program = p;
  slot->method = std::move(method).value();
  LoadedMethod loaded{0, slot->method->meta()};
  ET_RETURN_IF_ERROR(prepare_outputs(*slot));
  MutexLock lock(s->mu);
  if (s->closed) return not_found("session: closed");
  ET_RETURN_IF_ERROR(too_many_methods());
  loaded.handle = s->next_id++;
  s->methods[loaded.handle] = std::move(slot);
  return loaded;
}

Result<std::shared_ptr<MethodSlot>> Core::load_instance(
    std::shared_ptr<const SharedProgram> program, const std::string& method_name) {
  auto method = Method::load(program->program, method_name, method_options());
  if (!method.ok()) return method.status();
  auto slot = std::make_shared<MethodSlot>();
  slot->program = std::move(program);
  slot->method = std::move(method).value();
  ET_RETURN_IF_ERROR(prepare_outputs(*slot));
  return slot;
}

Status Core::prepare_outputs(MethodSlot& slot) {
  // Unplanned outputs get daemon memory; results are copied out of it on return. The
  // program states their sizes, so they count, with the planned memory, against the
  // method's limit before anything is allocated.
  Method& m = *slot.method;
  uint64_t total = m.planned_bytes();
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const ValueMeta& o = m.meta().outputs[i];
    if (o.tensor && !o.tensor->is_memory_planned && !m.output_is_input(i) &&
        __builtin_add_overflow(total, o.tensor->nbytes, &total)) {
      total = UINT64_MAX;
    }
  }
  if (total > limits_.max_method_bytes) {
    return resource_exhausted(fmt::format(
        "method '{}' needs {} bytes of planned memory and output buffers, over the limit of {} "
        "per method (--max-method-bytes)",
        m.meta().name, total, limits_.max_method_bytes));
  }
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    slot.output_buffers.emplace_back(nullptr, &std::free);
    const ValueMeta& o = m.meta().outputs[i];
    if (o.tensor && !o.tensor->is_memory_planned && !m.output_is_input(i)) {
      const size_t nbytes = std::max<size_t>(o.tensor->nbytes, 1);
      slot.output_buffers[i].reset(static_cast<uint8_t*>(std::calloc(nbytes, 1)));
      if (!slot.output_buffers[i]) {
        return resource_exhausted(fmt::format("cannot allocate {} bytes for output {}", nbytes, i));
      }
      ET_RETURN_IF_ERROR(m.set_output_buffer(i, slot.output_buffers[i].get(), nbytes));
    }
  }
  return Status();
}

Status Core::drop_method(const std::string& token, uint64_t handle) {
  ET_ASSIGN_OR_RETURN(std::shared_ptr<Session> s, session_for(token));
  std::shared_ptr<MethodSlot> slot;
  {
    MutexLock lock(s->mu);
    auto it = s->methods.find(handle);
    if (it == s->methods.end()) {
      return not_found(
          fmt::format("method_handle {} is not one of this session's methods", handle));
    }
    slot = it->second;
    s->methods.erase(it);
  }
  slot->when_idle([&] {
    slot->method.reset();
    slot->inputs.clear();
  });
  return Status();
}

size_t Core::warm_up(const std::string& model, const SharedProgram& program) {
  size_t ran = 0;
  for (const std::string& name : program.program->method_names()) {
    const auto start = std::chrono::steady_clock::now();
    Status st = [&]() -> Status {
      ET_ASSIGN_OR_RETURN(std::unique_ptr<Method> m,
                          Method::load(program.program, name, method_options()));
      ExecuteLimits limits;
      limits.deadline = start + limits_.execution_deadline;
      limits.max_instructions = limits_.max_instructions;
      return run_on_zeros(*m, limits);
    }();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (st.ok()) {
      ++ran;
      spdlog::info("model {}: method {} warmed up ({:.1f} ms on zeros)", model, name, ms);
    } else {
      spdlog::warn(
          "model {}: method {} did not run on zeros at warm-up ({}); it is served, and "
          "its first call does the work warm-up would have",
          model, name, st.message());
    }
  }
  return ran;
}

}  // namespace et::server
