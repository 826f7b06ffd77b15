// libmicrohttpd, the HTTP server of the OSCQuery namespace. Its start and info calls are C
// variadic functions, which Swift cannot call: these wrappers pass the options aseqosc uses.
#ifndef ASEQOSC_CMICROHTTPD_SHIM_H
#define ASEQOSC_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>

/// Starts a daemon on its own polling thread, listening on `address`, with the limits that
/// bound what a client can hold: connections in all and per address, the seconds a connection
/// may stay silent, and the memory one request may use (its request line and headers).
static inline struct MHD_Daemon *aseqosc_http_start(
    unsigned int flags, const struct sockaddr *address, MHD_AcceptPolicyCallback accept, void *accept_context,
    MHD_AccessHandlerCallback handler, void *handler_context, MHD_NotifyConnectionCallback notify,
    void *notify_context, unsigned int connection_limit, unsigned int per_address_limit,
    unsigned int timeout_seconds, size_t memory_limit) {
    return MHD_start_daemon(
        flags, 0, accept, accept_context, handler, handler_context,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
        MHD_OPTION_END);
}

/// The port the daemon listens on (the one the kernel chose for port 0).
static inline uint16_t aseqosc_http_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

#endif
