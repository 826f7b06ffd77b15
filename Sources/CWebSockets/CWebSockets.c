// The libwebsockets calls aseqosc makes, each resolved on first use: see include/CWebSockets.h.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "CLazyLibrary.h"
// Not exported from the binary, so the library's own calls never come back here.
#pragma GCC visibility push(hidden)
#include "CWebSockets.h"

#if LWS_LIBRARY_VERSION_MAJOR > 4 || (LWS_LIBRARY_VERSION_MAJOR == 4 && LWS_LIBRARY_VERSION_MINOR >= 3)
static struct aseqosc_lazy_library library = {"libwebsockets.so.19"};
const char *const aseqosc_ws_package = "libwebsockets19t64";
#else
static struct aseqosc_lazy_library library = {"libwebsockets.so.17"};
const char *const aseqosc_ws_package = "libwebsockets17";
#endif

const char *aseqosc_ws_library(void) { return library.soname; }

// The calls below are made only once a context started, so the library is there.
#define LOOKUP(type, name) ASEQOSC_LAZY_FUNCTION(library, type, name)

const size_t aseqosc_lws_pre = LWS_PRE;

struct aseqosc_ws {
    struct lws_context *context;
    struct lws_protocols protocols[2];
    lws_retry_bo_t retry;
    lws_sorted_usec_list_t timer;
    aseqosc_ws_callback callback;
    aseqosc_ws_tick tick;
    void *user;
    char host[64];
};

void *lws_context_user(struct lws_context *context) {
    LOOKUP(void *(*)(struct lws_context *), "lws_context_user")
    return function ? function(context) : NULL;
}

struct lws_context *lws_get_context(const struct lws *wsi) {
    LOOKUP(struct lws_context * (*)(const struct lws *), "lws_get_context")
    return function ? function(wsi) : NULL;
}

static int protocol_callback(struct lws *wsi, enum lws_callback_reasons reason, void *session, void *in, size_t len) {
    struct aseqosc_ws *ws = lws_context_user(lws_get_context(wsi));
    if (!ws || !ws->callback) return 0;
    return ws->callback(ws->user, wsi, reason, session, in, len);
}

// lws logs errors only while it starts, to stderr, marked as ours.
static void emit_log(int level, const char *line) {
    (void)level;
    fprintf(stderr, "oscquery: libwebsockets: %s", line);
}

struct aseqosc_ws *aseqosc_ws_start(
    const char *host, int port, int ipv6, const struct aseqosc_ws_limits *limits, aseqosc_ws_callback callback,
    aseqosc_ws_tick tick, void *user) {
    LOOKUP(struct lws_context * (*)(const struct lws_context_creation_info *), "lws_create_context")
    if (!function) {
        errno = ELIBACC;
        return NULL;
    }
    {
        LOOKUP(void (*)(int, void (*)(int, const char *)), "lws_set_log_level")
        if (function) function(LLL_ERR, emit_log);
    }
    struct aseqosc_ws *ws = calloc(1, sizeof *ws);
    if (!ws) return NULL;
    ws->callback = callback;
    ws->tick = tick;
    ws->user = user;
    ws->protocols[0].name = "oscquery";
    ws->protocols[0].callback = protocol_callback;
    ws->protocols[0].per_session_data_size = 0;
    ws->protocols[0].rx_buffer_size = 1024;
    ws->retry.secs_since_valid_ping = (uint16_t)limits->ping_seconds;
    ws->retry.secs_since_valid_hangup = (uint16_t)limits->hangup_seconds;

    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = port;
    if (host) {
        snprintf(ws->host, sizeof ws->host, "%s", host);
        info.iface = ws->host;
    }
    info.protocols = ws->protocols;
    info.user = ws;
    info.options = ipv6 ? 0 : LWS_SERVER_OPTION_DISABLE_IPV6;
    info.keepalive_timeout = (int)limits->idle_seconds;
    info.timeout_secs = limits->idle_seconds;
    info.timeout_secs_ah_idle = limits->idle_seconds;
    info.max_http_header_data = (unsigned short)limits->request_bytes;
    info.max_http_header_pool = limits->connections;
    info.retry_and_idle_policy = &ws->retry;
    info.gid = -1;
    info.uid = -1;
    ws->context = function(&info);
    if (!ws->context) {
        free(ws);
        return NULL;
    }
    // Running, it logs nothing: what clients do is counted, and a client sending oversized
    // requests must not be able to fill the journal.
    {
        LOOKUP(void (*)(int, void (*)(int, const char *)), "lws_set_log_level")
        if (function) function(0, emit_log);
    }
    return ws;
}

int aseqosc_ws_port(struct aseqosc_ws *ws) {
    LOOKUP(struct lws_vhost * (*)(struct lws_context *, const char *), "lws_get_vhost_by_name")
    struct lws_vhost *vhost = function ? function(ws->context, "default") : NULL;
    if (!vhost) return 0;
    {
        LOOKUP(int (*)(struct lws_vhost *), "lws_get_vhost_listen_port")
        return function ? function(vhost) : 0;
    }
}

int aseqosc_ws_service(struct aseqosc_ws *ws) {
    LOOKUP(int (*)(struct lws_context *, int), "lws_service")
    return function ? function(ws->context, 0) : -1;
}

void aseqosc_ws_wake(struct aseqosc_ws *ws) {
    LOOKUP(void (*)(struct lws_context *), "lws_cancel_service")
    if (function) function(ws->context);
}

static void timer_fired(lws_sorted_usec_list_t *timer) {
    struct aseqosc_ws *ws = (struct aseqosc_ws *)((char *)timer - offsetof(struct aseqosc_ws, timer));
    if (ws->tick) ws->tick(ws->user);
}

void aseqosc_ws_schedule(struct aseqosc_ws *ws, int64_t microseconds) {
    LOOKUP(void (*)(struct lws_context *, int, lws_sorted_usec_list_t *, sul_cb_t, lws_usec_t), "lws_sul_schedule")
    if (function) function(ws->context, 0, &ws->timer, timer_fired, microseconds);
}

void aseqosc_ws_destroy(struct aseqosc_ws *ws) {
    LOOKUP(void (*)(struct lws_context *), "lws_context_destroy")
    if (function) function(ws->context);
    free(ws);
}

const struct sockaddr *aseqosc_ws_filter_address(void *args) {
    return (const struct sockaddr *)&((struct lws_filter_network_conn_args *)args)->cli_addr;
}

int aseqosc_ws_filter_socket(void *args) { return ((struct lws_filter_network_conn_args *)args)->accept_fd; }

// The calls the server makes from its callbacks.

int lws_hdr_total_length(struct lws *wsi, enum lws_token_indexes h) {
    LOOKUP(int (*)(struct lws *, enum lws_token_indexes), "lws_hdr_total_length")
    return function ? function(wsi, h) : 0;
}

int lws_hdr_copy(struct lws *wsi, char *dest, int len, enum lws_token_indexes h) {
    LOOKUP(int (*)(struct lws *, char *, int, enum lws_token_indexes), "lws_hdr_copy")
    return function ? function(wsi, dest, len, h) : -1;
}

int lws_hdr_copy_fragment(struct lws *wsi, char *dest, int len, enum lws_token_indexes h, int frag_idx) {
    LOOKUP(int (*)(struct lws *, char *, int, enum lws_token_indexes, int), "lws_hdr_copy_fragment")
    return function ? function(wsi, dest, len, h, frag_idx) : -1;
}

int lws_add_http_common_headers(
    struct lws *wsi, unsigned int code, const char *content_type, lws_filepos_t content_len, unsigned char **p,
    unsigned char *end) {
    LOOKUP(int (*)(struct lws *, unsigned int, const char *, lws_filepos_t, unsigned char **, unsigned char *),
        "lws_add_http_common_headers")
    return function ? function(wsi, code, content_type, content_len, p, end) : 1;
}

int lws_add_http_header_by_name(
    struct lws *wsi, const unsigned char *name, const unsigned char *value, int length, unsigned char **p,
    unsigned char *end) {
    LOOKUP(int (*)(struct lws *, const unsigned char *, const unsigned char *, int, unsigned char **, unsigned char *),
        "lws_add_http_header_by_name")
    return function ? function(wsi, name, value, length, p, end) : 1;
}

int lws_finalize_write_http_header(struct lws *wsi, unsigned char *start, unsigned char **p, unsigned char *end) {
    LOOKUP(int (*)(struct lws *, unsigned char *, unsigned char **, unsigned char *), "lws_finalize_write_http_header")
    return function ? function(wsi, start, p, end) : 1;
}

int lws_write(struct lws *wsi, unsigned char *buf, size_t len, enum lws_write_protocol protocol) {
    LOOKUP(int (*)(struct lws *, unsigned char *, size_t, enum lws_write_protocol), "lws_write")
    return function ? function(wsi, buf, len, protocol) : -1;
}

int lws_callback_on_writable(struct lws *wsi) {
    LOOKUP(int (*)(struct lws *), "lws_callback_on_writable")
    return function ? function(wsi) : -1;
}

int lws_http_transaction_completed(struct lws *wsi) {
    LOOKUP(int (*)(struct lws *), "lws_http_transaction_completed")
    return function ? function(wsi) : 1;
}

void lws_close_reason(struct lws *wsi, enum lws_close_status status, unsigned char *buf, size_t len) {
    LOOKUP(void (*)(struct lws *, enum lws_close_status, unsigned char *, size_t), "lws_close_reason")
    if (function) function(wsi, status, buf, len);
}

void lws_set_timeout(struct lws *wsi, enum pending_timeout reason, int secs) {
    LOOKUP(void (*)(struct lws *, enum pending_timeout, int), "lws_set_timeout")
    if (function) function(wsi, reason, secs);
}

int lws_is_final_fragment(struct lws *wsi) {
    LOOKUP(int (*)(struct lws *), "lws_is_final_fragment")
    return function ? function(wsi) : 1;
}

int lws_frame_is_binary(struct lws *wsi) {
    LOOKUP(int (*)(struct lws *), "lws_frame_is_binary")
    return function ? function(wsi) : 0;
}

size_t lws_remaining_packet_payload(struct lws *wsi) {
    LOOKUP(size_t (*)(struct lws *), "lws_remaining_packet_payload")
    return function ? function(wsi) : 0;
}

lws_sockfd_type lws_get_socket_fd(struct lws *wsi) {
    LOOKUP(lws_sockfd_type (*)(struct lws *), "lws_get_socket_fd")
    return function ? function(wsi) : -1;
}
#pragma GCC visibility pop
