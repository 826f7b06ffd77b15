// glibc exports its allocator under __libc_* names as well, so these replacements can forward to
// it without dlsym (which itself allocates, and would recurse).
#include "AllocationCounter.h"
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

// Under AddressSanitizer or ThreadSanitizer the sanitizer's runtime owns malloc; replacing it
// as well would hand the sanitizer blocks it never saw allocated. Sanitizer builds
// (scripts/sanitize) therefore count nothing, and the tests that count skip there.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define ASEQOSC_SANITIZED 1
#endif
#endif

static __thread int counting;
static __thread int64_t count;
static volatile int replacement_called;

static inline void note_allocation(void) {
    replacement_called = 1;
    if (counting) count++;
}

#ifndef ASEQOSC_SANITIZED
void *malloc(size_t size) {
    note_allocation();
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
    note_allocation();
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size) {
    note_allocation();
    return __libc_realloc(p, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    note_allocation();
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(alignment, size);
    if (p == NULL) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size) {
    note_allocation();
    return __libc_memalign(alignment, size);
}

void *memalign(size_t alignment, size_t size) {
    note_allocation();
    return __libc_memalign(alignment, size);
}

#endif

void aseqosc_allocations_start(void) {
    count = 0;
    counting = 1;
}

int64_t aseqosc_allocations_stop(void) {
    counting = 0;
    return count;
}

int aseqosc_allocations_interposed(void) {
    replacement_called = 0;
    // strdup allocates inside libc, so this sees whether libc's own calls reach us too.
    char *volatile p = strdup("x");
    free(p);
    return replacement_called;
}

int aseqosc_allocations_countable(void) {
#ifdef ASEQOSC_SANITIZED
    return 0;
#else
    return 1;
#endif
}
