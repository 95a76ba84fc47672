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
/* crc32_combine takes a z_off_t, which may be a macro (and crc32_combine itself may be renamed
   to crc32_combine64 when off_t is 64-bit); this wrapper takes a plain 64-bit length. */
static inline unsigned long czlib_crc32_combine(unsigned long crc1, unsigned long crc2, long long length2) {
    return crc32_combine(crc1, crc2, (z_off_t)length2);
}
#endif
