// libmicrohttpd, the HTTP server of the OSCQuery namespace. Its start and info calls are C
// variadic functions, which Swift cannot call: these wrappers pass the options aseqosc uses.
// The library is not linked: CMicroHTTPD.c defines each call and loads it (and GnuTLS with it)
// the first time one is made, so a bridge without OSCQuery does not load it; without the
// library the server does not start (aseqosc_http_start returns NULL, errno ELIBACC).
#ifndef ASEQOSC_CMICROHTTPD_H
#define ASEQOSC_CMICROHTTPD_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <microhttpd.h>

/// Starts a daemon on its own polling thread, accepting on `listener` (a bound, listening
/// socket the daemon owns from then on), with the limits that bound what a client can hold:
/// connections in all and per address, the seconds a connection may stay silent, and the
/// memory one request may use (its request line and headers).
struct MHD_Daemon *aseqosc_http_start(
    unsigned int flags, int listener, MHD_AcceptPolicyCallback accept, void *accept_context,
    MHD_AccessHandlerCallback handler, void *handler_context, MHD_NotifyConnectionCallback notify,
    void *notify_context, unsigned int connection_limit, unsigned int per_address_limit,
    unsigned int timeout_seconds, size_t memory_limit);

/// The port the daemon listens on (the one the kernel chose for port 0).
uint16_t aseqosc_http_bound_port(struct MHD_Daemon *daemon);

#endif
