// liblo's public header, unchanged; this shim exists so the module map has one fixed header to
// point at while liblo's own install path stays pkg-config's business.

#ifndef ASEQOSC_CLIBLO_SHIM_H
#define ASEQOSC_CLIBLO_SHIM_H
#include <lo/lo.h>
#include <lo/lo_lowlevel.h>
#include <sys/socket.h>

#endif
