// Whether this build runs under a sanitizer (GCC's and clang's spellings), for the few
// places that must behave differently there.
#pragma once

namespace et {

#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// ASan or TSan: their runtimes reserve terabytes of address space and run threads of
// their own.
inline constexpr bool kSanitized = kThreadSanitizer || kAddressSanitizer;

}  // namespace et
