#ifndef FORMDATAKIT_CZLIB_SHIM_H
#define FORMDATAKIT_CZLIB_SHIM_H
#include <zlib.h>

/* deflateInit2 / inflateInit2 are function-like macros (they pass ZLIB_VERSION and
   sizeof(z_stream)); Swift cannot import those, so these inline wrappers expose them. */
static inline int czlib_deflateInit2(z_streamp strm, int level, int method, int windowBits,
                                     int memLevel, int strategy) {
    return deflateInit2(strm, level, method, windowBits, memLevel, strategy);
}

static inline int czlib_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}
#endif
