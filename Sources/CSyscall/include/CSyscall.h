// The system calls a forwarded event makes (OSC -> MIDI: the receive and the MIDI write; MIDI ->
// OSC: the wait, the sequencer read and the send), each returning what the kernel answers: the
// count, or -errno (errno is left alone). On x86_64 an inline `syscall` instruction: against
// libc's syscall() it saves up to 32 instructions an event and under 1 % of latency (BENCHMARKS.md,
// "Optimisations removed, or kept"); other architectures take libc's syscall().
#ifndef ASEQOSC_CSYSCALL_H
#define ASEQOSC_CSYSCALL_H
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline long aseqosc_syscall6(long number, long a, long b, long c, long d, long e, long f) {
#if defined(__x86_64__) && !defined(ASEQOSC_GENERIC_SYSCALLS)
    long result;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "0"(number), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return result;
#else
    long result = syscall(number, a, b, c, d, e, f);
    return result < 0 ? -errno : result;
#endif
}

/// write(2) of `length` bytes.
static inline long aseqosc_write_now(int fd, const void *bytes, unsigned long length) {
    return aseqosc_syscall6(SYS_write, fd, (long)bytes, (long)length, 0, 0, 0);
}

/// read(2) of up to `length` bytes.
static inline long aseqosc_read_now(int fd, void *bytes, unsigned long length) {
    return aseqosc_syscall6(SYS_read, fd, (long)bytes, (long)length, 0, 0, 0);
}

/// recvfrom(2) into `buffer`, the sender's address into `address`.
static inline long aseqosc_recvfrom_now(int fd, void *buffer, unsigned long length, int flags,
                                        struct sockaddr *address, socklen_t *addressLength) {
    return aseqosc_syscall6(SYS_recvfrom, fd, (long)buffer, (long)length, flags, (long)address,
                            (long)addressLength);
}

/// send(2) on a connected socket.
static inline long aseqosc_send_now(int fd, const void *bytes, unsigned long length, int flags) {
    return aseqosc_syscall6(SYS_sendto, fd, (long)bytes, (long)length, flags, 0, 0);
}

/// poll(2).
static inline long aseqosc_poll_now(struct pollfd *descriptors, unsigned long count, int timeout) {
#if defined(__x86_64__) && !defined(ASEQOSC_GENERIC_SYSCALLS)
    return aseqosc_syscall6(SYS_poll, (long)descriptors, (long)count, timeout, 0, 0, 0);
#else
    int ready = poll(descriptors, count, timeout);
    return ready < 0 ? -errno : ready;
#endif
}
// `sendmmsg`, `recvmmsg` and `struct mmsghdr` exist only under _GNU_SOURCE, which Swift's Glibc
// module is not built with. The struct has glibc's layout under its own name, and the asm labels
// bind the declarations to glibc's symbols, so nothing clashes with a GNU-mode header.
struct aseqosc_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

int aseqosc_sendmmsg(int fd, struct aseqosc_mmsghdr *messages, unsigned int count, int flags)
    __asm__("sendmmsg");

struct timespec;
int aseqosc_recvmmsg(int fd, struct aseqosc_mmsghdr *messages, unsigned int count, int flags,
                     struct timespec *timeout) __asm__("recvmmsg");
// `pthread_setname_np` is also _GNU_SOURCE only; bound to glibc's symbol the same way.
#include <pthread.h>
int aseqosc_pthread_setname(pthread_t thread, const char *name) __asm__("pthread_setname_np");
#endif
