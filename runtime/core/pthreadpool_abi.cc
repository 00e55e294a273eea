// pthreadpool's C interface, served by the project's WorkPool (work_pool.h).
//
// XNNPACK (Debian's libXNNPACK.so) calls pthreadpool_parallelize_* through the PLT.
// These definitions are in every executable that links et_runtime and, because
// libXNNPACK.so refers to them, the linker exports them from the executable, which the
// dynamic linker searches before libpthreadpool.so.0 (still loaded: XNNPACK names it as
// needed, but nothing in the process calls it). So XNNPACK's operators run on the same
// threads, with the same waits, as the project's own kernels. Every function the
// library exports is defined here, so no pool handle can reach the library's code.
// thread_pool_test.cc's XNNPACK-free tests and backends/xnnpack's binding test check it.
//
// Contract (pthreadpool.h): every index runs exactly once and the call returns when all
// have; a null pool runs everything on the caller; PTHREADPOOL_FLAG_DISABLE_DENORMALS
// turns on flush-to-zero on each participant for the call; PTHREADPOOL_FLAG_YIELD_WORKERS
// sends the workers to sleep after the call instead of polling for the next one; calls
// from several threads at once are safe (one is shared out, the others run inline).
#include <pthreadpool.h>

#include <initializer_list>

#include "runtime/core/work_pool.h"

struct pthreadpool final : et::WorkPool {
  pthreadpool(size_t threads, et::CpuLoad& load) : WorkPool(threads, load) {}
};

namespace et {

std::unique_ptr<WorkPool> WorkPool::create(size_t threads, CpuLoad& load) {
  return std::make_unique<pthreadpool>(threads, load);
}

pthreadpool* WorkPool::native() { return static_cast<pthreadpool*>(this); }

}  // namespace et

namespace {

using et::Loop;
using AnyFn = Loop::AnyFn;

template <class Task, class... Args>
void call(AnyFn fn, void* context, Args... args) {
  reinterpret_cast<Task>(fn)(context, args...);
}

template <class Task>
void dispatch(pthreadpool_t pool, uint32_t flags, Task fn, void* context, uint32_t uarch,
              std::initializer_list<size_t> ranges, std::initializer_list<size_t> tiles,
              Loop::Invoke invoke) {
  Loop loop;
  loop.invoke = invoke;
  loop.fn = reinterpret_cast<AnyFn>(fn);
  loop.context = context;
  loop.uarch = uarch;
  loop.dims = static_cast<int>(ranges.size());
  int d = 0;
  for (size_t r : ranges) loop.range[d++] = r;
  d = 0;
  for (size_t t : tiles) loop.tile[d++] = t;
  loop.disable_denormals = (flags & PTHREADPOOL_FLAG_DISABLE_DENORMALS) != 0;
  loop.workers_sleep_after = (flags & PTHREADPOOL_FLAG_YIELD_WORKERS) != 0;
  if (pool == nullptr) {
    et::WorkPool::run_inline(loop);
  } else {
    pool->run(loop);
  }
}

}  // namespace

extern "C" {

pthreadpool_t pthreadpool_create(size_t threads) {
  try {  // a C caller gets NULL, as from pthreadpool, not an exception
    return new pthreadpool(threads, et::CpuLoad::process());
  } catch (...) {
    return nullptr;
  }
}

void pthreadpool_destroy(pthreadpool_t pool) { delete pool; }

size_t pthreadpool_get_threads_count(pthreadpool_t pool) {
  return pool == nullptr ? 1 : pool->threads();
}

void pthreadpool_parallelize_1d(pthreadpool_t pool, pthreadpool_task_1d_t fn, void* context,
                                size_t range, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range}, {1},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t*) {
             call<pthreadpool_task_1d_t>(f, c, i[0]);
           });
}

void pthreadpool_parallelize_1d_with_uarch(pthreadpool_t pool, pthreadpool_task_1d_with_id_t fn,
                                           void* context, uint32_t default_uarch,
                                           uint32_t /*max_uarch*/, size_t range, uint32_t flags) {
  dispatch(pool, flags, fn, context, default_uarch, {range}, {1},
           [](AnyFn f, void* c, uint32_t uarch, const size_t* i, const size_t*) {
             call<pthreadpool_task_1d_with_id_t>(f, c, uarch, i[0]);
           });
}

void pthreadpool_parallelize_1d_tile_1d(pthreadpool_t pool, pthreadpool_task_1d_tile_1d_t fn,
                                        void* context, size_t range, size_t tile, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range}, {tile},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_1d_tile_1d_t>(f, c, i[0], n[0]);
           });
}

void pthreadpool_parallelize_2d(pthreadpool_t pool, pthreadpool_task_2d_t fn, void* context,
                                size_t range_i, size_t range_j, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j}, {1, 1},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t*) {
             call<pthreadpool_task_2d_t>(f, c, i[0], i[1]);
           });
}

void pthreadpool_parallelize_2d_tile_1d(pthreadpool_t pool, pthreadpool_task_2d_tile_1d_t fn,
                                        void* context, size_t range_i, size_t range_j,
                                        size_t tile_j, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j}, {1, tile_j},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_2d_tile_1d_t>(f, c, i[0], i[1], n[1]);
           });
}

void pthreadpool_parallelize_2d_tile_2d(pthreadpool_t pool, pthreadpool_task_2d_tile_2d_t fn,
                                        void* context, size_t range_i, size_t range_j,
                                        size_t tile_i, size_t tile_j, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j}, {tile_i, tile_j},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_2d_tile_2d_t>(f, c, i[0], i[1], n[0], n[1]);
           });
}

void pthreadpool_parallelize_2d_tile_2d_with_uarch(pthreadpool_t pool,
                                                   pthreadpool_task_2d_tile_2d_with_id_t fn,
                                                   void* context, uint32_t default_uarch,
                                                   uint32_t /*max_uarch*/, size_t range_i,
                                                   size_t range_j, size_t tile_i, size_t tile_j,
                                                   uint32_t flags) {
  dispatch(pool, flags, fn, context, default_uarch, {range_i, range_j}, {tile_i, tile_j},
           [](AnyFn f, void* c, uint32_t uarch, const size_t* i, const size_t* n) {
             call<pthreadpool_task_2d_tile_2d_with_id_t>(f, c, uarch, i[0], i[1], n[0], n[1]);
           });
}

void pthreadpool_parallelize_3d(pthreadpool_t pool, pthreadpool_task_3d_t fn, void* context,
                                size_t range_i, size_t range_j, size_t range_k, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k}, {1, 1, 1},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t*) {
             call<pthreadpool_task_3d_t>(f, c, i[0], i[1], i[2]);
           });
}

void pthreadpool_parallelize_3d_tile_1d(pthreadpool_t pool, pthreadpool_task_3d_tile_1d_t fn,
                                        void* context, size_t range_i, size_t range_j,
                                        size_t range_k, size_t tile_k, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k}, {1, 1, tile_k},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_3d_tile_1d_t>(f, c, i[0], i[1], i[2], n[2]);
           });
}

void pthreadpool_parallelize_3d_tile_2d(pthreadpool_t pool, pthreadpool_task_3d_tile_2d_t fn,
                                        void* context, size_t range_i, size_t range_j,
                                        size_t range_k, size_t tile_j, size_t tile_k,
                                        uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k}, {1, tile_j, tile_k},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_3d_tile_2d_t>(f, c, i[0], i[1], i[2], n[1], n[2]);
           });
}

void pthreadpool_parallelize_3d_tile_2d_with_uarch(pthreadpool_t pool,
                                                   pthreadpool_task_3d_tile_2d_with_id_t fn,
                                                   void* context, uint32_t default_uarch,
                                                   uint32_t /*max_uarch*/, size_t range_i,
                                                   size_t range_j, size_t range_k, size_t tile_j,
                                                   size_t tile_k, uint32_t flags) {
  dispatch(pool, flags, fn, context, default_uarch, {range_i, range_j, range_k},
           {1, tile_j, tile_k},
           [](AnyFn f, void* c, uint32_t uarch, const size_t* i, const size_t* n) {
             call<pthreadpool_task_3d_tile_2d_with_id_t>(f, c, uarch, i[0], i[1], i[2], n[1], n[2]);
           });
}

void pthreadpool_parallelize_4d(pthreadpool_t pool, pthreadpool_task_4d_t fn, void* context,
                                size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k, range_l}, {1, 1, 1, 1},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t*) {
             call<pthreadpool_task_4d_t>(f, c, i[0], i[1], i[2], i[3]);
           });
}

void pthreadpool_parallelize_4d_tile_1d(pthreadpool_t pool, pthreadpool_task_4d_tile_1d_t fn,
                                        void* context, size_t range_i, size_t range_j,
                                        size_t range_k, size_t range_l, size_t tile_l,
                                        uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k, range_l}, {1, 1, 1, tile_l},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_4d_tile_1d_t>(f, c, i[0], i[1], i[2], i[3], n[3]);
           });
}

void pthreadpool_parallelize_4d_tile_2d(pthreadpool_t pool, pthreadpool_task_4d_tile_2d_t fn,
                                        void* context, size_t range_i, size_t range_j,
                                        size_t range_k, size_t range_l, size_t tile_k,
                                        size_t tile_l, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k, range_l},
           {1, 1, tile_k, tile_l},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_4d_tile_2d_t>(f, c, i[0], i[1], i[2], i[3], n[2], n[3]);
           });
}

void pthreadpool_parallelize_4d_tile_2d_with_uarch(pthreadpool_t pool,
                                                   pthreadpool_task_4d_tile_2d_with_id_t fn,
                                                   void* context, uint32_t default_uarch,
                                                   uint32_t /*max_uarch*/, size_t range_i,
                                                   size_t range_j, size_t range_k, size_t range_l,
                                                   size_t tile_k, size_t tile_l, uint32_t flags) {
  dispatch(pool, flags, fn, context, default_uarch, {range_i, range_j, range_k, range_l},
           {1, 1, tile_k, tile_l},
           [](AnyFn f, void* c, uint32_t uarch, const size_t* i, const size_t* n) {
             call<pthreadpool_task_4d_tile_2d_with_id_t>(f, c, uarch, i[0], i[1], i[2], i[3], n[2],
                                                         n[3]);
           });
}

void pthreadpool_parallelize_5d(pthreadpool_t pool, pthreadpool_task_5d_t fn, void* context,
                                size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                size_t range_m, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k, range_l, range_m},
           {1, 1, 1, 1, 1}, [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t*) {
             call<pthreadpool_task_5d_t>(f, c, i[0], i[1], i[2], i[3], i[4]);
           });
}

void pthreadpool_parallelize_5d_tile_1d(pthreadpool_t pool, pthreadpool_task_5d_tile_1d_t fn,
                                        void* context, size_t range_i, size_t range_j,
                                        size_t range_k, size_t range_l, size_t range_m,
                                        size_t tile_m, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k, range_l, range_m},
           {1, 1, 1, 1, tile_m}, [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_5d_tile_1d_t>(f, c, i[0], i[1], i[2], i[3], i[4], n[4]);
           });
}

void pthreadpool_parallelize_5d_tile_2d(pthreadpool_t pool, pthreadpool_task_5d_tile_2d_t fn,
                                        void* context, size_t range_i, size_t range_j,
                                        size_t range_k, size_t range_l, size_t range_m,
                                        size_t tile_l, size_t tile_m, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k, range_l, range_m},
           {1, 1, 1, tile_l, tile_m},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_5d_tile_2d_t>(f, c, i[0], i[1], i[2], i[3], i[4], n[3], n[4]);
           });
}

void pthreadpool_parallelize_6d(pthreadpool_t pool, pthreadpool_task_6d_t fn, void* context,
                                size_t range_i, size_t range_j, size_t range_k, size_t range_l,
                                size_t range_m, size_t range_n, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k, range_l, range_m, range_n},
           {1, 1, 1, 1, 1, 1}, [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t*) {
             call<pthreadpool_task_6d_t>(f, c, i[0], i[1], i[2], i[3], i[4], i[5]);
           });
}

void pthreadpool_parallelize_6d_tile_1d(pthreadpool_t pool, pthreadpool_task_6d_tile_1d_t fn,
                                        void* context, size_t range_i, size_t range_j,
                                        size_t range_k, size_t range_l, size_t range_m,
                                        size_t range_n, size_t tile_n, uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k, range_l, range_m, range_n},
           {1, 1, 1, 1, 1, tile_n},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_6d_tile_1d_t>(f, c, i[0], i[1], i[2], i[3], i[4], i[5], n[5]);
           });
}

void pthreadpool_parallelize_6d_tile_2d(pthreadpool_t pool, pthreadpool_task_6d_tile_2d_t fn,
                                        void* context, size_t range_i, size_t range_j,
                                        size_t range_k, size_t range_l, size_t range_m,
                                        size_t range_n, size_t tile_m, size_t tile_n,
                                        uint32_t flags) {
  dispatch(pool, flags, fn, context, 0, {range_i, range_j, range_k, range_l, range_m, range_n},
           {1, 1, 1, 1, tile_m, tile_n},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_task_6d_tile_2d_t>(f, c, i[0], i[1], i[2], i[3], i[4], i[5], n[4],
                                                 n[5]);
           });
}

// The deprecated names pthreadpool still exports (NNPACK's); no flags.

void pthreadpool_compute_1d(pthreadpool_t pool, pthreadpool_function_1d_t fn, void* argument,
                            size_t range) {
  dispatch(pool, 0, fn, argument, 0, {range}, {1},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t*) {
             call<pthreadpool_function_1d_t>(f, c, i[0]);
           });
}

void pthreadpool_compute_1d_tiled(pthreadpool_t pool, pthreadpool_function_1d_tiled_t fn,
                                  void* argument, size_t range, size_t tile) {
  dispatch(pool, 0, fn, argument, 0, {range}, {tile},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_function_1d_tiled_t>(f, c, i[0], n[0]);
           });
}

void pthreadpool_compute_2d(pthreadpool_t pool, pthreadpool_function_2d_t fn, void* argument,
                            size_t range_i, size_t range_j) {
  dispatch(pool, 0, fn, argument, 0, {range_i, range_j}, {1, 1},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t*) {
             call<pthreadpool_function_2d_t>(f, c, i[0], i[1]);
           });
}

void pthreadpool_compute_2d_tiled(pthreadpool_t pool, pthreadpool_function_2d_tiled_t fn,
                                  void* argument, size_t range_i, size_t range_j, size_t tile_i,
                                  size_t tile_j) {
  dispatch(pool, 0, fn, argument, 0, {range_i, range_j}, {tile_i, tile_j},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_function_2d_tiled_t>(f, c, i[0], i[1], n[0], n[1]);
           });
}

void pthreadpool_compute_3d_tiled(pthreadpool_t pool, pthreadpool_function_3d_tiled_t fn,
                                  void* argument, size_t range_i, size_t range_j, size_t range_k,
                                  size_t tile_i, size_t tile_j, size_t tile_k) {
  dispatch(pool, 0, fn, argument, 0, {range_i, range_j, range_k}, {tile_i, tile_j, tile_k},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_function_3d_tiled_t>(f, c, i[0], i[1], i[2], n[0], n[1], n[2]);
           });
}

void pthreadpool_compute_4d_tiled(pthreadpool_t pool, pthreadpool_function_4d_tiled_t fn,
                                  void* argument, size_t range_i, size_t range_j, size_t range_k,
                                  size_t range_l, size_t tile_i, size_t tile_j, size_t tile_k,
                                  size_t tile_l) {
  dispatch(pool, 0, fn, argument, 0, {range_i, range_j, range_k, range_l},
           {tile_i, tile_j, tile_k, tile_l},
           [](AnyFn f, void* c, uint32_t, const size_t* i, const size_t* n) {
             call<pthreadpool_function_4d_tiled_t>(f, c, i[0], i[1], i[2], i[3], n[0], n[1], n[2],
                                                   n[3]);
           });
}

}  // extern "C"
