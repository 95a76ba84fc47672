#ifndef CCURL_H
#define CCURL_H

/// The few libcurl calls FormDataKit's CurlTransport makes, bound at run time.
///
/// libcurl's headers and its unversioned `libcurl.so` link come with a development package that
/// a Swift-on-Linux machine usually lacks, while the library itself (`libcurl.so.4`) is always
/// there: FoundationNetworking needs it. So this target declares what it uses (libcurl's ABI and
/// option numbers are stable across 7.x and 8.x), loads the library with `dlopen` on first use,
/// and exposes typed wrappers for libcurl's variadic calls, which Swift cannot call. Handles are
/// plain pointers; every call returns libcurl's own result code.

#include <stddef.h>
#include <stdint.h>

/// libcurl's `curl_off_t` (64-bit on every platform FormDataKit supports).
typedef int64_t ccurl_off_t;

/// `size_t fn(char *buffer, size_t size, size_t nitems, void *userdata)`: libcurl's read,
/// write and header callbacks.
typedef size_t (*ccurl_data_callback)(char *buffer, size_t size, size_t nitems, void *userdata);
/// `int fn(void *userdata, curl_off_t offset, int origin)`: the seek callback.
typedef int (*ccurl_seek_callback)(void *userdata, ccurl_off_t offset, int origin);
/// `int fn(void *userdata, dltotal, dlnow, ultotal, ulnow)`: the transfer-progress callback.
typedef int (*ccurl_xferinfo_callback)(void *userdata, ccurl_off_t dltotal, ccurl_off_t dlnow,
                                       ccurl_off_t ultotal, ccurl_off_t ulnow);

/// `int fn(void *userdata, char *primary_ip, char *local_ip, int primary_port, int local_port)`:
/// the pre-request callback (libcurl 7.80+), called before each request is sent on a connection.
typedef int (*ccurl_prereq_callback)(void *userdata, char *primary_ip, char *local_ip, int primary_port, int local_port);
/// `int fn(void *clientp, curl_socket_t item)`: the close-socket callback, which closes `item`
/// (0 on success).
typedef int (*ccurl_closesocket_callback)(void *clientp, int item);

/// Loads libcurl (once per process) and calls `curl_global_init`. Returns 0 when it is usable;
/// otherwise writes why into `error` (NUL-terminated, at most `error_size` bytes) and returns -1.
int ccurl_load(char *error, size_t error_size);
/// libcurl's version text (`curl_version()`), after a successful `ccurl_load`.
const char *ccurl_version(void);
/// libcurl's version number (`curl_version_info()->version_num`, e.g. 0x075801 for 7.88.1).
unsigned int ccurl_version_number(void);

void *ccurl_easy_init(void);
void ccurl_easy_cleanup(void *easy);
/// `curl_easy_reset(easy)`: every option back to its default (connections and caches are kept).
void ccurl_easy_reset(void *easy);
int ccurl_easy_setopt_long(void *easy, int option, long value);
int ccurl_easy_setopt_off(void *easy, int option, ccurl_off_t value);
int ccurl_easy_setopt_pointer(void *easy, int option, const void *value);
/// Sets a `struct curl_blob` option (libcurl copies the bytes).
int ccurl_easy_setopt_blob(void *easy, int option, const void *data, size_t length);
int ccurl_easy_setopt_data_callback(void *easy, int option, ccurl_data_callback callback);
int ccurl_easy_setopt_seek_callback(void *easy, int option, ccurl_seek_callback callback);
int ccurl_easy_setopt_xferinfo_callback(void *easy, int option, ccurl_xferinfo_callback callback);

/// What a transfer's upload-progress filter holds: the most body bytes libcurl has said are sent,
/// and what to call when that grows.
typedef struct ccurl_upload_progress {
    ccurl_off_t most_sent;
    ccurl_xferinfo_callback callback;
    void *userdata;
} ccurl_upload_progress;
/// Sets `CURLOPT_XFERINFOFUNCTION` (`function_option`) and `CURLOPT_XFERINFODATA` (`data_option`)
/// to a filter in C that calls `progress->callback(progress->userdata, …)` only when the upload
/// count is above every count before (`progress->most_sent`, start it at 0): libcurl calls its
/// progress function each time it visits a transfer, nearly always with nothing new. `progress`
/// must live as long as the transfer. Returns the first failing setopt's code, or 0.
int ccurl_easy_set_upload_progress(void *easy, int function_option, int data_option, ccurl_upload_progress *progress);
int ccurl_easy_setopt_prereq_callback(void *easy, int option, ccurl_prereq_callback callback);
int ccurl_easy_setopt_closesocket_callback(void *easy, int option, ccurl_closesocket_callback callback);
/// Sets `CURLOPT_SOCKOPTFUNCTION` (`function_option`) and `CURLOPT_SOCKOPTDATA` (`data_option`)
/// so that each new connection's socket gets `TCP_NOTSENT_LOWAT` = `bytes`: at most about that
/// many bytes wait unsent in the kernel (a lost connection loses less of the body). Returns the
/// first failing setopt's code, or 0.
int ccurl_easy_limit_unsent(void *easy, int function_option, int data_option, int bytes);
int ccurl_easy_getinfo_long(void *easy, int info, long *value);
int ccurl_easy_getinfo_off(void *easy, int info, ccurl_off_t *value);
int ccurl_easy_getinfo_string(void *easy, int info, const char **value);
/// Whether the TLS connection `easy` is about to send on chose `h2` by ALPN: 1 yes, 0 no (another
/// protocol, or no TLS), -1 unknown (a TLS library other than OpenSSL). Call it in the
/// pre-request callback, once the connection is set up.
int ccurl_easy_tls_alpn_is_h2(void *easy);
const char *ccurl_easy_strerror(int code);
/// `curl_easy_pause(easy, bitmask)`: `CURLPAUSE_CONT` (0) resumes a transfer whose read callback
/// returned `CURL_READFUNC_PAUSE`. Call it only on the thread that drives the handle's multi.
int ccurl_easy_pause(void *easy, int bitmask);

void *ccurl_slist_append(void *list, const char *string);
void ccurl_slist_free_all(void *list);

void *ccurl_multi_init(void);
int ccurl_multi_cleanup(void *multi);
int ccurl_multi_setopt_long(void *multi, int option, long value);
int ccurl_multi_add_handle(void *multi, void *easy);
int ccurl_multi_remove_handle(void *multi, void *easy);
int ccurl_multi_perform(void *multi, int *running);
int ccurl_multi_poll(void *multi, int timeout_ms, int *numfds);
int ccurl_multi_wakeup(void *multi);
/// The next finished transfer of `multi` (`curl_multi_info_read`, `CURLMSG_DONE` only):
/// returns 1 and sets `easy` and `result`, or returns 0 when no transfer has finished.
int ccurl_multi_next_done(void *multi, void **easy, int *result);

/// A cookie jar shared by easy handles: a `curl_share_init` handle sharing cookies, with lock
/// callbacks (one mutex per data kind) so handles on any thread may use and release it.
void *ccurl_cookie_share_create(void);
/// The libcurl share handle, for `CURLOPT_SHARE`.
void *ccurl_cookie_share_handle(void *owner);
/// Releases the share (`curl_share_cleanup`); nonzero (and nothing freed) while handles use it.
int ccurl_cookie_share_destroy(void *owner);
/// Every cookie of the jar `easy` uses (`CURLINFO_COOKIELIST`), as Netscape cookie-file lines
/// joined by `\n`, in the jar's order; NULL when there are none. Free it with `ccurl_free`.
char *ccurl_easy_cookie_lines(void *easy);
/// Frees what `ccurl_easy_cookie_lines` returned.
void ccurl_free(void *pointer);

#endif
