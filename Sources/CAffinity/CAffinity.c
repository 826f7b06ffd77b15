#define _GNU_SOURCE
#include "CAffinity.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>

int aseqosc_highest_allowed_cpu(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -errno;
    for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--) {
        if (CPU_ISSET(cpu, &set)) return cpu;
    }
    return -EINVAL;
}

int aseqosc_cpu_allowed(int cpu) {
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE) return 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -errno;
    return CPU_ISSET(cpu, &set) ? 1 : 0;
}

int aseqosc_pin_thread(int cpu) {
    cpu_set_t set;
    if (cpu < 0 || cpu >= CPU_SETSIZE) return EINVAL;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}
