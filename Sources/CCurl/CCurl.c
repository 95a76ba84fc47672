#include "CCurl.h"

#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

// Function types of the libcurl symbols used (declared here: libcurl's headers are not needed).
typedef int (*global_init_fn)(long flags);
typedef char *(*version_fn)(void);
typedef void *(*version_info_fn)(int age);
typedef void *(*easy_init_fn)(void);
typedef void (*easy_cleanup_fn)(void *);
typedef void (*easy_reset_fn)(void *);
typedef int (*easy_setopt_fn)(void *, int, ...);
typedef int (*easy_getinfo_fn)(void *, int, ...);
typedef const char *(*easy_strerror_fn)(int);
typedef int (*easy_pause_fn)(void *, int);
typedef void *(*slist_append_fn)(void *, const char *);
typedef void (*slist_free_all_fn)(void *);
typedef void *(*multi_init_fn)(void);
typedef int (*multi_cleanup_fn)(void *);
typedef int (*multi_setopt_fn)(void *, int, ...);
typedef int (*multi_handle_fn)(void *, void *);
typedef int (*multi_perform_fn)(void *, int *);
typedef int (*multi_poll_fn)(void *, void *, unsigned int, int, int *);
typedef int (*multi_wakeup_fn)(void *);
typedef void *(*share_init_fn)(void);
typedef int (*share_cleanup_fn)(void *);
typedef int (*share_setopt_fn)(void *, int, ...);

// libcurl's CURLMsg: { CURLMSG msg; CURL *easy_handle; union { void *whatever; CURLcode result; } data; }
struct ccurl_message {
    int msg;
    void *easy_handle;
    union {
        void *whatever;
        int result;
    } data;
};
typedef struct ccurl_message *(*multi_info_read_fn)(void *, int *);

// The first fields of curl_version_info_data: { CURLversion age; const char *version; unsigned int version_num; ... }
struct ccurl_version_info {
    int age;
    const char *version;
    unsigned int version_num;
};

static struct {
    global_init_fn global_init;
    version_fn version;
    version_info_fn version_info;
    easy_init_fn easy_init;
    easy_cleanup_fn easy_cleanup;
    easy_reset_fn easy_reset;
    easy_setopt_fn easy_setopt;
    easy_getinfo_fn easy_getinfo;
    easy_strerror_fn easy_strerror;
    easy_pause_fn easy_pause;
    slist_append_fn slist_append;
    slist_free_all_fn slist_free_all;
    multi_init_fn multi_init;
    multi_cleanup_fn multi_cleanup;
    multi_setopt_fn multi_setopt;
    multi_handle_fn multi_add_handle;
    multi_handle_fn multi_remove_handle;
    multi_perform_fn multi_perform;
    multi_poll_fn multi_poll;
    multi_wakeup_fn multi_wakeup;
    multi_info_read_fn multi_info_read;
    share_init_fn share_init;
    share_cleanup_fn share_cleanup;
    share_setopt_fn share_setopt;
    /// OpenSSL's `SSL_get0_alpn_selected`, from libcurl's own libssl (NULL with another TLS library).
    void (*alpn_selected)(const void *ssl, const unsigned char **data, unsigned int *length);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512];
static int load_status = -1;

#define CCURL_GLOBAL_ALL 3L

static void load_library(void) {
#if defined(__APPLE__)
    static const char *const names[] = {"libcurl.4.dylib", "/usr/lib/libcurl.4.dylib", NULL};
#else
    static const char *const names[] = {"libcurl.so.4", "libcurl.so", NULL};
#endif
    void *library = NULL;
    const char *last_error = "not found";
    for (int index = 0; names[index] != NULL && library == NULL; index++) {
        library = dlopen(names[index], RTLD_NOW | RTLD_LOCAL);
        if (library == NULL) {
            const char *error = dlerror();
            if (error != NULL) last_error = error;
        }
    }
    if (library == NULL) {
        snprintf(load_error, sizeof load_error, "libcurl could not be loaded: %s", last_error);
        return;
    }
#define BIND(field, symbol)                                                                       \
    do {                                                                                          \
        *(void **)(&api.field) = dlsym(library, symbol);                                          \
        if (api.field == NULL) {                                                                  \
            snprintf(load_error, sizeof load_error, "libcurl lacks %s (version too old?)", symbol); \
            return;                                                                               \
        }                                                                                         \
    } while (0)
    BIND(global_init, "curl_global_init");
    BIND(version, "curl_version");
    BIND(version_info, "curl_version_info");
    BIND(easy_init, "curl_easy_init");
    BIND(easy_cleanup, "curl_easy_cleanup");
    BIND(easy_reset, "curl_easy_reset");
    BIND(easy_setopt, "curl_easy_setopt");
    BIND(easy_getinfo, "curl_easy_getinfo");
    BIND(easy_strerror, "curl_easy_strerror");
    BIND(easy_pause, "curl_easy_pause");
    BIND(slist_append, "curl_slist_append");
    BIND(slist_free_all, "curl_slist_free_all");
    BIND(multi_init, "curl_multi_init");
    BIND(multi_cleanup, "curl_multi_cleanup");
    BIND(multi_setopt, "curl_multi_setopt");
    BIND(multi_add_handle, "curl_multi_add_handle");
    BIND(multi_remove_handle, "curl_multi_remove_handle");
    BIND(multi_perform, "curl_multi_perform");
    BIND(multi_poll, "curl_multi_poll");       // libcurl 7.66
    BIND(multi_wakeup, "curl_multi_wakeup");   // libcurl 7.68
    BIND(multi_info_read, "curl_multi_info_read");
    BIND(share_init, "curl_share_init");
    BIND(share_cleanup, "curl_share_cleanup");
    BIND(share_setopt, "curl_share_setopt");
#undef BIND
    *(void **)(&api.alpn_selected) = dlsym(library, "SSL_get0_alpn_selected");
    int code = api.global_init(CCURL_GLOBAL_ALL);
    if (code != 0) {
        snprintf(load_error, sizeof load_error, "curl_global_init failed with code %d", code);
        return;
    }
    load_status = 0;
}

int ccurl_load(char *error, size_t error_size) {
    pthread_once(&load_once, load_library);
    if (load_status != 0 && error != NULL && error_size > 0) {
        snprintf(error, error_size, "%s", load_error);
    }
    return load_status;
}

const char *ccurl_version(void) { return api.version(); }

unsigned int ccurl_version_number(void) {
    // CURLVERSION_FIRST (0) is enough for the version number.
    const struct ccurl_version_info *info = api.version_info(0);
    return info == NULL ? 0 : info->version_num;
}

void *ccurl_easy_init(void) { return api.easy_init(); }
void ccurl_easy_cleanup(void *easy) { api.easy_cleanup(easy); }
void ccurl_easy_reset(void *easy) { api.easy_reset(easy); }
int ccurl_easy_setopt_long(void *easy, int option, long value) { return api.easy_setopt(easy, option, value); }
int ccurl_easy_setopt_off(void *easy, int option, ccurl_off_t value) { return api.easy_setopt(easy, option, value); }
int ccurl_easy_setopt_pointer(void *easy, int option, const void *value) { return api.easy_setopt(easy, option, value); }
int ccurl_easy_setopt_blob(void *easy, int option, const void *data, size_t length) {
    // libcurl's struct curl_blob { void *data; size_t len; unsigned int flags; }, CURL_BLOB_COPY = 1.
    struct {
        void *data;
        size_t len;
        unsigned int flags;
    } blob = {(void *)data, length, 1};
    return api.easy_setopt(easy, option, &blob);
}
int ccurl_easy_setopt_data_callback(void *easy, int option, ccurl_data_callback callback) {
    return api.easy_setopt(easy, option, callback);
}
int ccurl_easy_setopt_seek_callback(void *easy, int option, ccurl_seek_callback callback) {
    return api.easy_setopt(easy, option, callback);
}
int ccurl_easy_setopt_xferinfo_callback(void *easy, int option, ccurl_xferinfo_callback callback) {
    return api.easy_setopt(easy, option, callback);
}
static int ccurl_upload_progress_filter(void *clientp, ccurl_off_t dltotal, ccurl_off_t dlnow, ccurl_off_t ultotal,
                                        ccurl_off_t ulnow) {
    ccurl_upload_progress *progress = clientp;
    if (ulnow <= progress->most_sent) return 0;
    progress->most_sent = ulnow;
    return progress->callback(progress->userdata, dltotal, dlnow, ultotal, ulnow);
}
int ccurl_easy_set_upload_progress(void *easy, int function_option, int data_option, ccurl_upload_progress *progress) {
    int code = api.easy_setopt(easy, function_option, ccurl_upload_progress_filter);
    if (code != 0) return code;
    return api.easy_setopt(easy, data_option, (void *)progress);
}
int ccurl_easy_setopt_prereq_callback(void *easy, int option, ccurl_prereq_callback callback) {
    return api.easy_setopt(easy, option, callback);
}
int ccurl_easy_setopt_closesocket_callback(void *easy, int option, ccurl_closesocket_callback callback) {
    return api.easy_setopt(easy, option, callback);
}
// The socket-options callback of ccurl_easy_limit_unsent: `clientp` is the limit in bytes.
// CURLSOCKTYPE_IPCXN (0) is a new connection's socket; CURL_SOCKOPT_OK (0) goes on either way
// (a kernel without TCP_NOTSENT_LOWAT only keeps its larger backlog).
static int ccurl_unsent_limit_sockopt(void *clientp, int socket, int purpose) {
#ifdef TCP_NOTSENT_LOWAT
    if (purpose == 0) {
        int limit = (int)(intptr_t)clientp;
        (void)setsockopt(socket, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &limit, sizeof limit);
    }
#else
    (void)clientp;
    (void)socket;
    (void)purpose;
#endif
    return 0;
}
int ccurl_easy_limit_unsent(void *easy, int function_option, int data_option, int bytes) {
    int code = api.easy_setopt(easy, function_option, ccurl_unsent_limit_sockopt);
    return code != 0 ? code : api.easy_setopt(easy, data_option, (void *)(intptr_t)bytes);
}
int ccurl_easy_getinfo_long(void *easy, int info, long *value) { return api.easy_getinfo(easy, info, value); }
int ccurl_easy_getinfo_off(void *easy, int info, ccurl_off_t *value) { return api.easy_getinfo(easy, info, value); }
int ccurl_easy_getinfo_string(void *easy, int info, const char **value) { return api.easy_getinfo(easy, info, value); }
int ccurl_easy_tls_alpn_is_h2(void *easy) {
    struct {
        int backend;
        void *internals;
    } *session = NULL;
    if (api.easy_getinfo(easy, 0x400000 + 45 /* CURLINFO_TLS_SSL_PTR */, &session) != 0 || session == NULL) return -1;
    if (session->internals == NULL) return 0;                            // no TLS on the connection
    if (session->backend != 1 /* OpenSSL */ || api.alpn_selected == NULL) return -1;
    const unsigned char *protocol = NULL;
    unsigned int length = 0;
    api.alpn_selected(session->internals, &protocol, &length);
    return length == 2 && protocol != NULL && memcmp(protocol, "h2", 2) == 0 ? 1 : 0;
}

const char *ccurl_easy_strerror(int code) { return api.easy_strerror(code); }
int ccurl_easy_pause(void *easy, int bitmask) { return api.easy_pause(easy, bitmask); }

void *ccurl_slist_append(void *list, const char *string) { return api.slist_append(list, string); }
void ccurl_slist_free_all(void *list) { api.slist_free_all(list); }

void *ccurl_multi_init(void) { return api.multi_init(); }
int ccurl_multi_cleanup(void *multi) { return api.multi_cleanup(multi); }
int ccurl_multi_setopt_long(void *multi, int option, long value) { return api.multi_setopt(multi, option, value); }
int ccurl_multi_add_handle(void *multi, void *easy) { return api.multi_add_handle(multi, easy); }
int ccurl_multi_remove_handle(void *multi, void *easy) { return api.multi_remove_handle(multi, easy); }
int ccurl_multi_perform(void *multi, int *running) { return api.multi_perform(multi, running); }
int ccurl_multi_poll(void *multi, int timeout_ms, int *numfds) {
    return api.multi_poll(multi, NULL, 0, timeout_ms, numfds);
}
int ccurl_multi_wakeup(void *multi) { return api.multi_wakeup(multi); }

int ccurl_multi_next_done(void *multi, void **easy, int *result) {
    int queued = 0;
    struct ccurl_message *message;
    while ((message = api.multi_info_read(multi, &queued)) != NULL) {
        if (message->msg == 1) { // CURLMSG_DONE
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}

// A cookie share handle with its own locks: libcurl calls the lock functions around every use
// of the shared data, from whichever thread uses (or cleans up) an easy handle attached to it.
#define CCURL_SHOPT_SHARE 1
#define CCURL_SHOPT_LOCKFUNC 3
#define CCURL_SHOPT_UNLOCKFUNC 4
#define CCURL_SHOPT_USERDATA 5
#define CCURL_LOCK_DATA_COOKIE 2
#define CCURL_LOCK_DATA_LAST 8

struct ccurl_cookie_share {
    void *share;
    pthread_mutex_t locks[CCURL_LOCK_DATA_LAST];
};

static void ccurl_share_lock(void *handle, int data, int access, void *user) {
    (void)handle; (void)access;
    struct ccurl_cookie_share *owner = user;
    if (data >= 0 && data < CCURL_LOCK_DATA_LAST) pthread_mutex_lock(&owner->locks[data]);
}

static void ccurl_share_unlock(void *handle, int data, void *user) {
    (void)handle;
    struct ccurl_cookie_share *owner = user;
    if (data >= 0 && data < CCURL_LOCK_DATA_LAST) pthread_mutex_unlock(&owner->locks[data]);
}

void *ccurl_cookie_share_create(void) {
    struct ccurl_cookie_share *owner = calloc(1, sizeof *owner);
    if (owner == NULL) return NULL;
    owner->share = api.share_init();
    if (owner->share == NULL) { free(owner); return NULL; }
    for (int index = 0; index < CCURL_LOCK_DATA_LAST; index++) pthread_mutex_init(&owner->locks[index], NULL);
    api.share_setopt(owner->share, CCURL_SHOPT_LOCKFUNC, ccurl_share_lock);
    api.share_setopt(owner->share, CCURL_SHOPT_UNLOCKFUNC, ccurl_share_unlock);
    api.share_setopt(owner->share, CCURL_SHOPT_USERDATA, owner);
    api.share_setopt(owner->share, CCURL_SHOPT_SHARE, (long)CCURL_LOCK_DATA_COOKIE);
    return owner;
}

void *ccurl_cookie_share_handle(void *owner) { return ((struct ccurl_cookie_share *)owner)->share; }

int ccurl_cookie_share_destroy(void *pointer) {
    struct ccurl_cookie_share *owner = pointer;
    int code = api.share_cleanup(owner->share);
    if (code != 0) return code; // still in use: leave it (a leak, never a crash)
    for (int index = 0; index < CCURL_LOCK_DATA_LAST; index++) pthread_mutex_destroy(&owner->locks[index]);
    free(owner);
    return 0;
}

// libcurl's struct curl_slist: { char *data; struct curl_slist *next; }
struct ccurl_slist {
    char *data;
    struct ccurl_slist *next;
};
#define CCURL_INFO_COOKIELIST (0x400000 + 28)

char *ccurl_easy_cookie_lines(void *easy) {
    struct ccurl_slist *list = NULL;
    if (api.easy_getinfo(easy, CCURL_INFO_COOKIELIST, &list) != 0 || list == NULL) return NULL;
    size_t length = 0;
    for (struct ccurl_slist *item = list; item != NULL; item = item->next) length += strlen(item->data) + 1;
    char *text = malloc(length + 1);
    if (text != NULL) {
        char *end = text;
        for (struct ccurl_slist *item = list; item != NULL; item = item->next) {
            size_t size = strlen(item->data);
            memcpy(end, item->data, size);
            end += size;
            *end++ = '\n';
        }
        *end = 0;
    }
    api.slist_free_all(list);
    return text;
}

void ccurl_free(void *pointer) { free(pointer); }
