#ifndef CFILESPACE_H
#define CFILESPACE_H

#include <stdint.h>

/// Reserves `length` bytes from offset 0 of the open file `fd` without changing its size
/// (Linux: fallocate(2) with FALLOC_FL_KEEP_SIZE). Returns 0, or an errno value; ENOTSUP where
/// the platform has no such call. Swift's Glibc module does not expose fallocate (a GNU
/// extension), hence this one-function C target.
int cfilespace_reserve(int fd, int64_t length);

#endif
