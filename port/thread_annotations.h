// Clang's thread-safety annotations (-Wthread-safety): which mutex guards a member,
// which functions need one held or take it. Checked by clang at compile time (the
// sanitizer tree CI builds with clang has it as an error); no effect under GCC.
// Use et::Mutex and et::MutexLock (port/mutex.h): std::mutex carries no annotation.
#pragma once

#if defined(__clang__)
#define ET_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define ET_THREAD_ANNOTATION(x)
#endif

#define ET_CAPABILITY(name) ET_THREAD_ANNOTATION(capability(name))
#define ET_SCOPED_CAPABILITY ET_THREAD_ANNOTATION(scoped_lockable)
// A member read or written only with the mutex held.
#define ET_GUARDED_BY(mu) ET_THREAD_ANNOTATION(guarded_by(mu))
// A pointer member whose pointee is read or written only with the mutex held.
#define ET_PT_GUARDED_BY(mu) ET_THREAD_ANNOTATION(pt_guarded_by(mu))
// A function (or lambda) called only with these held.
#define ET_REQUIRES(...) ET_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
// A function called only without these held (it takes them).
#define ET_EXCLUDES(...) ET_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ET_ACQUIRE(...) ET_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ET_RELEASE(...) ET_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define ET_TRY_ACQUIRE(...) ET_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ET_ASSERT_CAPABILITY(mu) ET_THREAD_ANNOTATION(assert_capability(mu))
// For the rare function whose locking the analysis cannot follow; say why beside it.
#define ET_NO_THREAD_SAFETY_ANALYSIS ET_THREAD_ANNOTATION(no_thread_safety_analysis)
