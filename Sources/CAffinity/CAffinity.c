// The target is header-only (include/CAffinity.h); SwiftPM wants one source file.
#include "CAffinity.h"
