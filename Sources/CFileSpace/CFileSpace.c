#if defined(__linux__)
#define _GNU_SOURCE
#include <fcntl.h>
#endif
#include <errno.h>
#include "CFileSpace.h"

int cfilespace_reserve(int fd, int64_t length) {
#if defined(__linux__)
    for (;;) {
        if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)length) == 0) return 0;
        if (errno != EINTR) return errno;
    }
#else
    (void)fd;
    (void)length;
    return ENOTSUP;
#endif
}
