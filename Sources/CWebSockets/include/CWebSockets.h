// libwebsockets, the OSCQuery server's HTTP and its WebSocket upgrade on one port. Its context
// is configured through structs whose layout changes between 4.1 (Debian 12) and 4.3 (Debian
// 13), so this shim fills them in C, compiled against the build host's header; LWS_PRE is a
// macro Swift cannot import. The library is not linked: CWebSockets.c defines each call and
// loads it (libwebsockets.so.17 or .19, matching the header) the first time one is made, so a
// bridge without OSCQuery does not load it (nor OpenSSL with it); without the library the
// server does not start (aseqosc_ws_start returns NULL, errno ELIBACC).
#ifndef ASEQOSC_CWEBSOCKETS_H
#define ASEQOSC_CWEBSOCKETS_H
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <libwebsockets.h>

/// The bytes lws needs before a buffer given to lws_write.
extern const size_t aseqosc_lws_pre;

/// A running context with its one protocol and its timer.
struct aseqosc_ws;

/// What bounds the clients: connections in all, seconds an HTTP connection may stay silent,
/// bytes of request line and headers, and the WebSocket ping and hang-up seconds.
struct aseqosc_ws_limits {
    unsigned int connections;
    unsigned int idle_seconds;
    unsigned int request_bytes;
    unsigned int ping_seconds;
    unsigned int hangup_seconds;
};

/// Every callback of the one protocol, with `user` the pointer given to aseqosc_ws_start.
typedef int (*aseqosc_ws_callback)(
    void *user, struct lws *wsi, enum lws_callback_reasons reason, void *session, void *in, size_t len);
/// The timer's callback, with `user`.
typedef void (*aseqosc_ws_tick)(void *user);

/// Creates a context listening on `host` (numeric; NULL: every address) and `port` (0: any),
/// IPv6 only when `ipv6`, whose HTTP requests and WebSocket upgrades without a sub-protocol
/// all reach `callback`. NULL on failure (errno ELIBACC when the library is missing).
struct aseqosc_ws *aseqosc_ws_start(
    const char *host, int port, int ipv6, const struct aseqosc_ws_limits *limits, aseqosc_ws_callback callback,
    aseqosc_ws_tick tick, void *user);

/// The port the context listens on (the one the kernel chose for port 0).
int aseqosc_ws_port(struct aseqosc_ws *ws);

/// Runs the context's loop once (on the one thread that services it).
int aseqosc_ws_service(struct aseqosc_ws *ws);

/// Ends a wait in aseqosc_ws_service at once; the one call any thread may make.
void aseqosc_ws_wake(struct aseqosc_ws *ws);

/// Calls the tick callback `microseconds` from now, on the servicing thread (replacing a
/// pending one).
void aseqosc_ws_schedule(struct aseqosc_ws *ws, int64_t microseconds);

/// Destroys the context (closing every connection) and frees `ws`.
void aseqosc_ws_destroy(struct aseqosc_ws *ws);

/// The peer address of an accepted socket in LWS_CALLBACK_FILTER_NETWORK_CONNECTION's `user`.
const struct sockaddr *aseqosc_ws_filter_address(void *args);

/// The accepted socket in LWS_CALLBACK_FILTER_NETWORK_CONNECTION's `user`.
int aseqosc_ws_filter_socket(void *args);

/// The library file loaded (libwebsockets.so.17 or .19, as the build's header says).
const char *aseqosc_ws_library(void);

/// The Debian package holding that file.
extern const char *const aseqosc_ws_package;

#endif
