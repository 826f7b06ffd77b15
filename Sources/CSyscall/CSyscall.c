// Everything is static inline in include/CSyscall.h; SwiftPM wants a source file per C target.
#include "CSyscall.h"
