#if defined(__linux__)
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/random.h>
#include <sys/vfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
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

int cfilespace_random(void *buffer, int64_t count) {
#if defined(__linux__)
    for (;;) {
        ssize_t got = getrandom(buffer, (size_t)count, 0);
        if (got == (ssize_t)count) return 0;
        if (got < 0 && errno == EINTR) continue;
        return -1;
    }
#else
    (void)buffer;
    (void)count;
    return -1;
#endif
}

uint32_t cfilespace_device_major(uint64_t device) {
#if defined(__linux__)
    return major((dev_t)device);
#else
    return (uint32_t)((device >> 24) & 0xff);
#endif
}

int cfilespace_name_thread(const char *name) {
#if defined(__linux__)
    char kept[16];
    strncpy(kept, name, sizeof kept - 1);
    kept[sizeof kept - 1] = 0;
    return pthread_setname_np(pthread_self(), kept);
#else
    (void)name;
    return ENOSYS;
#endif
}

int cfilespace_prefer_throughput(void) {
#if defined(__linux__)
    struct sched_param parameter = { .sched_priority = 0 };
    return pthread_setschedparam(pthread_self(), SCHED_BATCH, &parameter);
#else
    return ENOSYS;
#endif
}
