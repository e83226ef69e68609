#pragma once
/// How many times slower the build under test runs than a plain one, for the few tests that bound
/// wall time (a stop flag honoured at once, a lost device ending the run at once). Their bounds
/// are for a plain build; under a sanitizer (scripts/sanitize.sh) they are stretched by this
/// factor, nowhere else. ThreadSanitizer's manual gives a 5-15x slowdown, AddressSanitizer's ~2x.
namespace salus::test {

#if defined(__SANITIZE_THREAD__)
#define SALUS_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SALUS_TEST_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SALUS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SALUS_TEST_ASAN 1
#endif
#endif

#if defined(SALUS_TEST_TSAN)
inline constexpr int kSanitizerSlowdown = 10;
#elif defined(SALUS_TEST_ASAN)
inline constexpr int kSanitizerSlowdown = 3;
#else
inline constexpr int kSanitizerSlowdown = 1;
#endif

}  // namespace salus::test
