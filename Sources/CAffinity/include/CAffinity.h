// CPU affinity of the calling thread: glibc declares cpu_set_t's calls and macros only under
// _GNU_SOURCE, which Swift's Glibc module does not see. Header-only, as CSyscall is, so that
// the fuzz build (Fuzz/run, swiftc by hand) needs only the include path.
#ifndef ASEQOSC_CAFFINITY_H
#define ASEQOSC_CAFFINITY_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>

/// The highest CPU the calling thread may run on (its affinity mask, as taskset or a cgroup
/// left it), or -errno.
static inline int aseqosc_highest_allowed_cpu(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -errno;
    for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--) {
        if (CPU_ISSET(cpu, &set)) return cpu;
    }
    return -EINVAL;
}

/// Whether the calling thread may run on `cpu`: 1, 0, or -errno.
static inline int aseqosc_cpu_allowed(int cpu) {
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE) return 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -errno;
    return CPU_ISSET(cpu, &set) ? 1 : 0;
}

/// Restricts the calling thread to `cpu`: 0, or an errno value.
static inline int aseqosc_pin_thread(int cpu) {
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE) return EINVAL;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}
#endif
