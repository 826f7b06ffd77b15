// CPU affinity of the calling thread: glibc declares cpu_set_t's calls and macros only under
// _GNU_SOURCE, which Swift's Glibc module does not see.
#ifndef ASEQOSC_CAFFINITY_H
#define ASEQOSC_CAFFINITY_H

/// The highest CPU the calling thread may run on (its affinity mask, as taskset or a cgroup
/// left it), or -errno.
int aseqosc_highest_allowed_cpu(void);
/// Whether the calling thread may run on `cpu`: 1, 0, or -errno.
int aseqosc_cpu_allowed(int cpu);
/// Restricts the calling thread to `cpu`: 0, or an errno value.
int aseqosc_pin_thread(int cpu);
#endif
