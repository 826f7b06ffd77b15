// The system calls of CSyscall.h, checked on both of its paths: built once as it is (the inline
// `syscall` instruction on x86_64) and once with -DASEQOSC_GENERIC_SYSCALLS (libc's syscall(),
// the path arm64 and every other architecture take). scripts/test builds and runs both.
// Each check prints "ok - NAME" or "not ok - NAME"; the exit status is the number that failed.
#include "CSyscall.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void check(int passed, const char *name) {
    printf("%s - %s (%s path)\n", passed ? "ok" : "not ok", name,
#if defined(__x86_64__) && !defined(ASEQOSC_GENERIC_SYSCALLS)
           "inline"
#else
           "generic"
#endif
    );
    if (!passed) failures++;
}

int main(void) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return 100;
    check(aseqosc_write_now(pipe_fds[1], "midi", 4) == 4, "write returns the count");
    char buffer[8] = {0};
    check(aseqosc_read_now(pipe_fds[0], buffer, sizeof buffer) == 4 && memcmp(buffer, "midi", 4) == 0,
          "read returns what was written");
    check(aseqosc_read_now(-1, buffer, 1) == -EBADF, "a failed read returns -errno");
    errno = 0;
    aseqosc_write_now(-1, "x", 1);
    check(errno == 0 || errno == EBADF, "errno is left alone or set as libc sets it");

    fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
    struct pollfd poll_fds = {.fd = pipe_fds[0], .events = POLLIN};
    check(aseqosc_poll_now(&poll_fds, 1, 0) == 0, "poll of an empty pipe times out");
    aseqosc_write_now(pipe_fds[1], "x", 1);
    check(aseqosc_poll_now(&poll_fds, 1, 1000) == 1 && (poll_fds.revents & POLLIN), "poll sees input");
    check(aseqosc_read_now(pipe_fds[0], buffer, 1) == 1 && aseqosc_read_now(pipe_fds[0], buffer, 1) == -EAGAIN,
          "a non-blocking read of nothing returns -EAGAIN");

    int receiver = socket(AF_INET, SOCK_DGRAM, 0), sender = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    bind(receiver, (struct sockaddr *)&address, sizeof address);
    getsockname(receiver, (struct sockaddr *)&address, &length);
    connect(sender, (struct sockaddr *)&address, sizeof address);
    check(aseqosc_send_now(sender, "/osc", 4, 0) == 4, "send on a connected socket");
    struct sockaddr_in from;
    socklen_t from_length = sizeof from;
    long received = aseqosc_recvfrom_now(receiver, buffer, sizeof buffer, 0, (struct sockaddr *)&from, &from_length);
    check(received == 4 && memcmp(buffer, "/osc", 4) == 0 && from.sin_addr.s_addr == htonl(INADDR_LOOPBACK),
          "recvfrom returns the datagram and its sender");

    struct aseqosc_mmsghdr messages[2];
    struct iovec vectors[2] = {{.iov_base = "ab", .iov_len = 2}, {.iov_base = "cde", .iov_len = 3}};
    memset(messages, 0, sizeof messages);
    for (int i = 0; i < 2; i++) {
        messages[i].msg_hdr.msg_iov = &vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
    }
    check(aseqosc_sendmmsg(sender, messages, 2, 0) == 2 && messages[1].msg_len == 3, "sendmmsg sends a batch");
    char first[4], second[4];
    struct iovec in_vectors[2] = {{.iov_base = first, .iov_len = 4}, {.iov_base = second, .iov_len = 4}};
    memset(messages, 0, sizeof messages);
    for (int i = 0; i < 2; i++) {
        messages[i].msg_hdr.msg_iov = &in_vectors[i];
        messages[i].msg_hdr.msg_iovlen = 1;
    }
    check(aseqosc_recvmmsg(receiver, messages, 2, 0, 0) == 2 && messages[0].msg_len == 2 && messages[1].msg_len == 3,
          "recvmmsg reads the batch");
    return failures;
}
