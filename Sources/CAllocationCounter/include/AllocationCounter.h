// Test-only: counts heap allocations made by the calling thread, so a test can prove that a hot
// path allocates nothing (swift-nio's approach). Linking this target replaces malloc and friends
// for the whole test process; each replacement forwards to glibc's own allocator.
#ifndef ASEQOSC_ALLOCATION_COUNTER_H
#define ASEQOSC_ALLOCATION_COUNTER_H
#include <stdint.h>

/// Starts counting this thread's allocations from zero.
void aseqosc_allocations_start(void);
/// Stops counting on this thread and returns how many allocations it made since the start.
int64_t aseqosc_allocations_stop(void);
/// Whether the replacements are the ones the process actually calls (false if the linker
/// picked libc's malloc, which would make every count zero and every test meaningless).
int aseqosc_allocations_interposed(void);
/// Whether this build counts at all: not under a sanitizer, whose runtime owns malloc.
int aseqosc_allocations_countable(void);
#endif
