// glibc calls that <sys/socket.h> and <pthread.h> declare only under _GNU_SOURCE, which Swift's
// Glibc module is not built with: `sendmmsg`, `recvmmsg` (with `struct mmsghdr`), `accept4` and
// `pthread_setname_np`; and `eventfd`, whose <sys/eventfd.h> the Glibc module leaves out. They
// are glibc's own, called as they are; only the declarations are here. Defining _GNU_SOURCE
// instead would give <sys/select.h>'s types a second, clashing definition beside every module
// that includes it without; so the struct has glibc's layout under its own name, and asm labels
// bind the declarations to glibc's symbols.
#ifndef ASEQOSC_CGNUCALLS_SHIM_H
#define ASEQOSC_CGNUCALLS_SHIM_H
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

struct aseqosc_mmsghdr {
    struct msghdr msg_hdr;
    unsigned int msg_len;
};

int aseqosc_sendmmsg(int fd, struct aseqosc_mmsghdr *messages, unsigned int count, int flags)
    __asm__("sendmmsg");

struct timespec;
int aseqosc_recvmmsg(int fd, struct aseqosc_mmsghdr *messages, unsigned int count, int flags,
                     struct timespec *timeout) __asm__("recvmmsg");

int aseqosc_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags) __asm__("accept4");

int aseqosc_pthread_setname(pthread_t thread, const char *name) __asm__("pthread_setname_np");
#endif
