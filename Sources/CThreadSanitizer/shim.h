#ifndef STREAMS_THREAD_SANITIZER_SHIM_H
#define STREAMS_THREAD_SANITIZER_SHIM_H

// ThreadSanitizer's annotation entry points, declared weak: in a TSan build its runtime
// defines them and these resolve to it; in any other build nothing does, and they are
// null. So whether they are there is one load and compare, decided by the linker, with
// no lookup at run time and no build flag (`Locked`, issue 27).
extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

// The runtime defines both or neither: one is asked.
static inline int streams_tsan_hooks_present(void) { return __tsan_acquire != 0; }

static inline void streams_tsan_acquire(const void *address) { __tsan_acquire((void *)address); }

static inline void streams_tsan_release(const void *address) { __tsan_release((void *)address); }

#endif
