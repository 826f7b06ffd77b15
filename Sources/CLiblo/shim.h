// liblo's public header, unchanged; this shim exists so the module map has one fixed header to
// point at while liblo's own install path stays pkg-config's business.
//
// It also declares the two socket calls OSCTransport needs that Swift's Glibc module hides:
// `sendmmsg`, `recvmmsg` and `struct mmsghdr` exist only under _GNU_SOURCE, which the Glibc
// module is not built with. The struct has glibc's layout under its own name, and the asm labels
// bind the declarations to glibc's symbols, so nothing clashes with a GNU-mode header.
#ifndef ASEQOSC_CLIBLO_SHIM_H
#define ASEQOSC_CLIBLO_SHIM_H
#include <lo/lo.h>
#include <lo/lo_lowlevel.h>
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
#endif
