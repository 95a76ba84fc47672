#ifndef CFILESPACE_H
#define CFILESPACE_H

#include <stdint.h>

/// Reserves `length` bytes from offset 0 of the open file `fd` without changing its size
/// (Linux: fallocate(2) with FALLOC_FL_KEEP_SIZE). Returns 0, or an errno value; ENOTSUP where
/// the platform has no such call. Swift's Glibc module does not expose fallocate (a GNU
/// extension), hence this one-function C target.
int cfilespace_reserve(int fd, int64_t length);

/// The type of the file system holding `path` (or the open file `fd` when `path` is NULL):
/// `statfs(2)`'s `f_type` magic number on Linux (0x9fa0 for /proc…); 0 when it cannot be
/// told, and on other platforms. Swift's Glibc module does not expose `statfs`.
int64_t cfilespace_filesystem_type(int fd, const char *path);

/// Fills `count` bytes at `buffer` from the system's random source in one getrandom(2) call on
/// Linux (Swift's Glibc module does not expose it, and the standard library's generator makes
/// one call per 8 bytes). Returns 0, or -1 when it could not (other platforms, or a call of
/// more than 256 bytes a signal cut short): then use another source.
int cfilespace_random(void *buffer, int64_t count);

/// The major number of device number `device` (major(3); Swift's Glibc module does not expose
/// the macro): 0 for the anonymous devices of kernel, memory and network file systems.
uint32_t cfilespace_device_major(uint64_t device);

/// Names the calling thread (Linux: pthread_setname_np(3), at most 15 bytes kept; Swift's Glibc
/// module does not expose it). Returns 0, or an error number (other platforms: ENOSYS).
int cfilespace_name_thread(const char *name);

/// Marks the calling thread as background throughput work (Linux: SCHED_BATCH, sched(7)): when
/// another thread wakes it, it does not preempt that thread; it runs on an idle core, or when the
/// waker's time slice ends or it sleeps. Its nice value is unchanged. Returns 0, or an error
/// number (other platforms: ENOSYS).
int cfilespace_prefer_throughput(void);

#endif
