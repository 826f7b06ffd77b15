// The Avahi calls aseqosc makes, each resolved in libavahi-client.so.3 (and the
// libavahi-common.so.3 it loads) on first use: see include/CAvahi.h for why.
#include <stddef.h>
#include "CLazyLibrary.h"
// Not exported from the binary, so the library's own calls never come back here.
#pragma GCC visibility push(hidden)
#include "CAvahi.h"

static struct aseqosc_lazy_library library = {"libavahi-client.so.3"};

// Each call: the function of the same name in the library, or `failure` without it.
#define CALL(ret, name, params, args, failure)                                                     \
    ret name params {                                                                              \
        ASEQOSC_LAZY_FUNCTION(library, ret(*) params, #name)                                       \
        if (!function) return failure;                                                             \
        return function args;                                                                      \
    }
#define CALL_VOID(name, params, args)                                                              \
    void name params {                                                                             \
        ASEQOSC_LAZY_FUNCTION(library, void(*) params, #name)                                      \
        if (function) function args;                                                               \
    }

AvahiClient *avahi_client_new(
    const AvahiPoll *poll, AvahiClientFlags flags, AvahiClientCallback callback, void *userdata, int *error) {
    ASEQOSC_LAZY_FUNCTION(library,
        AvahiClient * (*)(const AvahiPoll *, AvahiClientFlags, AvahiClientCallback, void *, int *), "avahi_client_new")
    if (!function) {
        if (error) *error = AVAHI_ERR_NOT_SUPPORTED;
        return NULL;
    }
    return function(poll, flags, callback, userdata, error);
}

const char *avahi_strerror(int error) {
    ASEQOSC_LAZY_FUNCTION(library, const char *(*)(int), "avahi_strerror")
    if (!function) return "libavahi-client.so.3 cannot be loaded (apt-get install libavahi-client3)";
    return function(error);
}

CALL(int, avahi_client_errno, (AvahiClient *c), (c), AVAHI_ERR_NOT_SUPPORTED)
CALL_VOID(avahi_client_free, (AvahiClient *c), (c))
CALL(AvahiClientState, avahi_client_get_state, (AvahiClient *c), (c), AVAHI_CLIENT_FAILURE)
CALL(AvahiThreadedPoll *, avahi_threaded_poll_new, (void), (), NULL)
CALL(const AvahiPoll *, avahi_threaded_poll_get, (AvahiThreadedPoll *p), (p), NULL)
CALL(int, avahi_threaded_poll_start, (AvahiThreadedPoll *p), (p), AVAHI_ERR_NOT_SUPPORTED)
CALL(int, avahi_threaded_poll_stop, (AvahiThreadedPoll *p), (p), AVAHI_ERR_NOT_SUPPORTED)
CALL_VOID(avahi_threaded_poll_free, (AvahiThreadedPoll *p), (p))
CALL_VOID(avahi_threaded_poll_lock, (AvahiThreadedPoll *p), (p))
CALL_VOID(avahi_threaded_poll_unlock, (AvahiThreadedPoll *p), (p))
CALL(AvahiSimplePoll *, avahi_simple_poll_new, (void), (), NULL)
CALL(const AvahiPoll *, avahi_simple_poll_get, (AvahiSimplePoll *s), (s), NULL)
CALL(int, avahi_simple_poll_iterate, (AvahiSimplePoll *s, int sleep_time), (s, sleep_time), -1)
CALL_VOID(avahi_simple_poll_free, (AvahiSimplePoll *s), (s))
CALL(AvahiServiceBrowser *, avahi_service_browser_new,
    (AvahiClient *client, AvahiIfIndex interface, AvahiProtocol protocol, const char *type, const char *domain,
        AvahiLookupFlags flags, AvahiServiceBrowserCallback callback, void *userdata),
    (client, interface, protocol, type, domain, flags, callback, userdata), NULL)
CALL(int, avahi_service_browser_free, (AvahiServiceBrowser *b), (b), AVAHI_ERR_NOT_SUPPORTED)
CALL(AvahiServiceResolver *, avahi_service_resolver_new,
    (AvahiClient *client, AvahiIfIndex interface, AvahiProtocol protocol, const char *name, const char *type,
        const char *domain, AvahiProtocol aprotocol, AvahiLookupFlags flags, AvahiServiceResolverCallback callback,
        void *userdata),
    (client, interface, protocol, name, type, domain, aprotocol, flags, callback, userdata), NULL)
CALL(int, avahi_service_resolver_free, (AvahiServiceResolver *r), (r), AVAHI_ERR_NOT_SUPPORTED)
CALL(AvahiEntryGroup *, avahi_entry_group_new, (AvahiClient *c, AvahiEntryGroupCallback callback, void *userdata),
    (c, callback, userdata), NULL)
CALL(int, avahi_entry_group_reset, (AvahiEntryGroup *g), (g), AVAHI_ERR_NOT_SUPPORTED)
CALL(int, avahi_entry_group_commit, (AvahiEntryGroup *g), (g), AVAHI_ERR_NOT_SUPPORTED)
CALL(int, avahi_entry_group_is_empty, (AvahiEntryGroup *g), (g), 1)
CALL(AvahiClient *, avahi_entry_group_get_client, (AvahiEntryGroup *g), (g), NULL)
CALL(int, avahi_entry_group_add_service_strlst,
    (AvahiEntryGroup *group, AvahiIfIndex interface, AvahiProtocol protocol, AvahiPublishFlags flags,
        const char *name, const char *type, const char *domain, const char *host, uint16_t port,
        AvahiStringList *txt),
    (group, interface, protocol, flags, name, type, domain, host, port, txt), AVAHI_ERR_NOT_SUPPORTED)
CALL(AvahiStringList *, avahi_string_list_add, (AvahiStringList *l, const char *text), (l, text), NULL)
CALL_VOID(avahi_string_list_free, (AvahiStringList *l), (l))
CALL(AvahiStringList *, avahi_string_list_get_next, (AvahiStringList *l), (l), NULL)
CALL(uint8_t *, avahi_string_list_get_text, (AvahiStringList *l), (l), NULL)
CALL(size_t, avahi_string_list_get_size, (AvahiStringList *l), (l), 0)
CALL(char *, avahi_alternative_service_name, (const char *s), (s), NULL)
CALL(char *, avahi_address_snprint, (char *ret_s, size_t length, const AvahiAddress *a), (ret_s, length, a), NULL)
CALL_VOID(avahi_free, (void *p), (p))

#pragma GCC visibility pop
