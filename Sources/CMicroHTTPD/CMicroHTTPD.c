// The libmicrohttpd calls aseqosc makes, each resolved in libmicrohttpd.so.12 on first use: see
// include/CMicroHTTPD.h for why.
#include <errno.h>
#include "CLazyLibrary.h"
// Not exported from the binary, so the library's own calls never come back here.
#pragma GCC visibility push(hidden)
#include "CMicroHTTPD.h"

static struct aseqosc_lazy_library library = {"libmicrohttpd.so.12"};

// The server's calls are made only once one started, so the library is there.
#define LOOKUP(type, name) ASEQOSC_LAZY_FUNCTION(library, type, name)

struct MHD_Daemon *aseqosc_http_start(
    unsigned int flags, int listener, MHD_AcceptPolicyCallback accept, void *accept_context,
    MHD_AccessHandlerCallback handler, void *handler_context, MHD_NotifyConnectionCallback notify,
    void *notify_context, unsigned int connection_limit, unsigned int per_address_limit,
    unsigned int timeout_seconds, size_t memory_limit) {
    LOOKUP(struct MHD_Daemon * (*)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
                                   MHD_AccessHandlerCallback, void *, ...),
        "MHD_start_daemon")
    if (!function) {
        errno = ELIBACC;
        return NULL;
    }
    return function(
        flags, 0, accept, accept_context, handler, handler_context,
        MHD_OPTION_LISTEN_SOCKET, listener,
        MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
        MHD_OPTION_END);
}

uint16_t aseqosc_http_bound_port(struct MHD_Daemon *daemon) {
    LOOKUP(const union MHD_DaemonInfo *(*)(struct MHD_Daemon *, enum MHD_DaemonInfoType, ...), "MHD_get_daemon_info")
    const union MHD_DaemonInfo *info = function ? function(daemon, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    return info == NULL ? 0 : info->port;
}

void MHD_stop_daemon(struct MHD_Daemon *daemon) {
    LOOKUP(void (*)(struct MHD_Daemon *), "MHD_stop_daemon")
    if (function) function(daemon);
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode) {
    LOOKUP(struct MHD_Response * (*)(size_t, void *, enum MHD_ResponseMemoryMode), "MHD_create_response_from_buffer")
    return function ? function(size, buffer, mode) : NULL;
}

void MHD_destroy_response(struct MHD_Response *response) {
    LOOKUP(void (*)(struct MHD_Response *), "MHD_destroy_response")
    if (function) function(response);
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header, const char *content) {
    LOOKUP(enum MHD_Result (*)(struct MHD_Response *, const char *, const char *), "MHD_add_response_header")
    return function ? function(response, header, content) : MHD_NO;
}

enum MHD_Result MHD_queue_response(
    struct MHD_Connection *connection, unsigned int status_code, struct MHD_Response *response) {
    LOOKUP(enum MHD_Result (*)(struct MHD_Connection *, unsigned int, struct MHD_Response *), "MHD_queue_response")
    return function ? function(connection, status_code, response) : MHD_NO;
}

int MHD_get_connection_values(
    struct MHD_Connection *connection, enum MHD_ValueKind kind, MHD_KeyValueIterator iterator, void *iterator_cls) {
    LOOKUP(int (*)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *),
        "MHD_get_connection_values")
    return function ? function(connection, kind, iterator, iterator_cls) : 0;
}
#pragma GCC visibility pop
