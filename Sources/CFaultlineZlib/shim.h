#ifndef CFAULTLINE_ZLIB_SHIM_H
#define CFAULTLINE_ZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 and deflateInit2 are macros over the _ functions with version/size arguments,
// which Swift cannot import; these wrappers give them a callable form.
static inline int faultline_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}
static inline int faultline_deflateInit2(z_streamp strm, int level, int windowBits) {
    return deflateInit2(strm, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
#endif
