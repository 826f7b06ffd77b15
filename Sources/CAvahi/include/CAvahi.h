// libavahi-client, the system mDNS responder's client library (avahi-daemon over D-Bus): its
// headers as they are. The library is not linked: CAvahi.c defines each call aseqosc makes and
// loads the library (and with it D-Bus's) the first time one is made, so a bridge that neither
// announces nor browses, `aseqosc send` and `--version` do not load it. Without the library
// the calls fail as Avahi's do, with AVAHI_ERR_NOT_SUPPORTED, which avahi_strerror names.
#ifndef ASEQOSC_CAVAHI_H
#define ASEQOSC_CAVAHI_H
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-client/publish.h>
#include <avahi-common/address.h>
#include <avahi-common/alternative.h>
#include <avahi-common/error.h>
#include <avahi-common/malloc.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/strlst.h>
#include <avahi-common/thread-watch.h>
#endif
