#include <dlfcn.h>
#include <stddef.h>
// Not exported from the binary.
#pragma GCC visibility push(hidden)
#include "CLazyLibrary.h"

void *aseqosc_lazy_symbol(struct aseqosc_lazy_library *library, const char *name) {
    if (!__atomic_load_n(&library->tried, __ATOMIC_ACQUIRE)) {
        // Two threads may both open it: dlopen counts references and returns the same handle.
        __atomic_store_n(&library->handle, dlopen(library->soname, RTLD_NOW | RTLD_LOCAL), __ATOMIC_RELAXED);
        __atomic_store_n(&library->tried, 1, __ATOMIC_RELEASE);
    }
    void *handle = __atomic_load_n(&library->handle, __ATOMIC_RELAXED);
    return handle ? dlsym(handle, name) : NULL;
}

#pragma GCC visibility pop
