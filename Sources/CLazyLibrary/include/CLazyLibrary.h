// A shared library opened the first time one of its calls is made, for the C targets that
// define a library's calls themselves and forward each to it (CAvahi, CMicroHTTPD): what does
// not use the library never loads it, and a machine without it still runs the rest.
#ifndef ASEQOSC_CLAZYLIBRARY_H
#define ASEQOSC_CLAZYLIBRARY_H

/// One library: its soname, and its handle once opened (NULL when it is not installed).
struct aseqosc_lazy_library {
    const char *soname;
    void *handle;
    int tried;
};

/// `name` in `library`, which is opened on the first call (once, whichever thread calls); NULL
/// when the library or the symbol is missing.
void *aseqosc_lazy_symbol(struct aseqosc_lazy_library *library, const char *name);

/// Declares `function` (of function pointer type `type`): `name` in `library`, looked up on the
/// first call and kept (a race only stores the same value twice). NULL when missing.
#define ASEQOSC_LAZY_FUNCTION(library, type, name)                                                 \
    static __typeof__(type) function;                                                              \
    if (!__atomic_load_n(&function, __ATOMIC_RELAXED))                                             \
        __atomic_store_n(&function, (type)aseqosc_lazy_symbol(&(library), name), __ATOMIC_RELAXED);

#endif
