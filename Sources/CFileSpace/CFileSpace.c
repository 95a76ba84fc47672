#if defined(__linux__)
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/vfs.h>
#endif
#include <errno.h>
#include <stddef.h>
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

int64_t cfilespace_filesystem_type(int fd, const char *path) {
#if defined(__linux__)
    struct statfs info;
    int result = path != NULL ? statfs(path, &info) : fstatfs(fd, &info);
    return result == 0 ? (int64_t)info.f_type : 0;
#else
    (void)fd;
    (void)path;
    return 0;
#endif
}
