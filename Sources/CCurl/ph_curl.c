#include "ph_curl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <ctype.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

int ph_curl_global_init(void) { return (int)curl_global_init(CURL_GLOBAL_DEFAULT); }

// MARK: share handle

struct ph_curl_share {
    CURLSH *handle;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

static void share_lock(CURL *handle, curl_lock_data data, curl_lock_access access, void *userptr) {
    (void)handle; (void)access;
    pthread_mutex_lock(&((ph_curl_share *)userptr)->locks[data]);
}

static void share_unlock(CURL *handle, curl_lock_data data, void *userptr) {
    (void)handle;
    pthread_mutex_unlock(&((ph_curl_share *)userptr)->locks[data]);
}

ph_curl_share *ph_curl_share_new(void) {
    ph_curl_share *share = calloc(1, sizeof *share);
    if (!share) return NULL;
    share->handle = curl_share_init();
    if (!share->handle) {
        free(share);
        return NULL;
    }
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_init(&share->locks[i], NULL);
    curl_share_setopt(share->handle, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(share->handle, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(share->handle, CURLSHOPT_USERDATA, share);
    curl_share_setopt(share->handle, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    curl_share_setopt(share->handle, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share->handle, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    return share;
}

void ph_curl_share_free(ph_curl_share *share) {
    if (!share) return;
    curl_share_cleanup(share->handle);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++) pthread_mutex_destroy(&share->locks[i]);
    free(share);
}

// MARK: cancel flag

struct ph_cancel_flag { atomic_int set; };

ph_cancel_flag *ph_cancel_flag_new(void) { return calloc(1, sizeof(ph_cancel_flag)); }
void ph_cancel_flag_set(ph_cancel_flag *flag) { atomic_store(&flag->set, 1); }
void ph_cancel_flag_free(ph_cancel_flag *flag) { free(flag); }

// MARK: address classes

static int in_v4(uint32_t address, uint32_t network, int bits) {
    uint32_t mask = bits == 0 ? 0 : 0xFFFFFFFFu << (32 - bits);
    return (address & mask) == (network & mask);
}

#define V4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

// Special-purpose ranges from the IANA IPv4 registry (RFC 6890 and successors).
static const char *v4_class(uint32_t a) {
    if (in_v4(a, V4(127, 0, 0, 0), 8)) return "loopback";
    if (in_v4(a, V4(10, 0, 0, 0), 8) || in_v4(a, V4(172, 16, 0, 0), 12) || in_v4(a, V4(192, 168, 0, 0), 16))
        return "private";
    if (in_v4(a, V4(169, 254, 0, 0), 16)) return "link-local";  // 169.254.169.254: cloud metadata
    if (in_v4(a, V4(100, 64, 0, 0), 10)) return "shared (carrier-grade NAT)";
    if (in_v4(a, V4(0, 0, 0, 0), 8)) return "unspecified";
    if (in_v4(a, V4(224, 0, 0, 0), 4)) return "multicast";
    if (in_v4(a, V4(240, 0, 0, 0), 4)) return "reserved";
    if (in_v4(a, V4(192, 0, 0, 0), 24) || in_v4(a, V4(192, 0, 2, 0), 24) || in_v4(a, V4(198, 18, 0, 0), 15)
        || in_v4(a, V4(198, 51, 100, 0), 24) || in_v4(a, V4(203, 0, 113, 0), 24))
        return "reserved";
    return NULL;
}

static const char *v6_class(const unsigned char *b) {
    static const unsigned char zero[16] = {0};
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF};
    static const unsigned char nat64[12] = {0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0};
    uint32_t embedded = V4(b[12], b[13], b[14], b[15]);
    if (memcmp(b, zero, 15) == 0 && b[15] == 1) return "loopback";
    if (memcmp(b, zero, 16) == 0) return "unspecified";
    // IPv4-mapped and NAT64 addresses reach an IPv4 host: judge that host.
    if (memcmp(b, mapped, 12) == 0 || memcmp(b, nat64, 12) == 0) return v4_class(embedded);
    if (memcmp(b, zero, 12) == 0) return "reserved";               // IPv4-compatible, deprecated
    if ((b[0] & 0xFE) == 0xFC) return "private";                   // fc00::/7 unique local
    if (b[0] == 0xFE && (b[1] & 0xC0) == 0x80) return "link-local"; // fe80::/10
    if (b[0] == 0xFE && (b[1] & 0xC0) == 0xC0) return "private";    // fec0::/10 site-local
    if (b[0] == 0xFF) return "multicast";
    if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0D && b[3] == 0xB8) return "reserved";  // documentation
    return NULL;
}

const char *ph_address_class(const struct sockaddr *address) {
    if (address->sa_family == AF_INET)
        return v4_class(ntohl(((const struct sockaddr_in *)address)->sin_addr.s_addr));
    if (address->sa_family == AF_INET6)
        return v6_class(((const struct sockaddr_in6 *)address)->sin6_addr.s6_addr);
    return "not an internet address";
}

const char *ph_address_text_class(const char *text) {
    struct sockaddr_in v4 = {.sin_family = AF_INET};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6};
    if (inet_pton(AF_INET, text, &v4.sin_addr) == 1) return ph_address_class((struct sockaddr *)&v4);
    if (inet_pton(AF_INET6, text, &v6.sin6_addr) == 1) return ph_address_class((struct sockaddr *)&v6);
    return "invalid";
}

// MARK: URLs as libcurl reads them

// The host of a parsed URL, lower-cased, and the port written in it (-1: none).
static int url_host(CURLU *u, char *host, size_t size, long *port) {
    char *h = NULL, *p = NULL;
    if (curl_url_get(u, CURLUPART_HOST, &h, 0) != CURLUE_OK || !h) return 0;
    snprintf(host, size, "%s", h);
    curl_free(h);
    for (char *c = host; *c; c++) *c = (char)tolower((unsigned char)*c);
    *port = -1;
    if (curl_url_get(u, CURLUPART_PORT, &p, 0) == CURLUE_OK && p) {
        *port = strtol(p, NULL, 10);
        curl_free(p);
    }
    return 1;
}

int ph_url_host(const char *url, char *host, size_t size, long *port) {
    CURLU *u = curl_url();
    int ok = u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK && url_host(u, host, size, port);
    curl_url_cleanup(u);
    return ok;
}

// Whether `host` is one of the comma-separated `list`; an empty or missing list allows any.
static int host_allowed(const char *list, const char *host) {
    if (!list || !*list) return 1;
    size_t length = strlen(host);
    for (const char *item = list; *item;) {
        const char *end = strchr(item, ',');
        size_t item_length = end ? (size_t)(end - item) : strlen(item);
        if (item_length == length && strncmp(item, host, length) == 0) return 1;
        if (!end) break;
        item = end + 1;
    }
    return 0;
}

// MARK: transfer

// A growable string: appends are amortized O(1) per byte.
typedef struct {
    char *data;
    size_t length, capacity;
} text;

static int text_append(text *t, const char *bytes, size_t length, const char *separator) {
    size_t extra = (t->length && separator ? strlen(separator) : 0) + length;
    if (t->length + extra + 1 > t->capacity) {
        size_t capacity = t->capacity ? t->capacity : 64;
        while (capacity < t->length + extra + 1) capacity *= 2;
        char *grown = realloc(t->data, capacity);
        if (!grown) return 0;
        t->data = grown;
        t->capacity = capacity;
    }
    if (t->length && separator) {
        memcpy(t->data + t->length, separator, strlen(separator));
        t->length += strlen(separator);
    }
    memcpy(t->data + t->length, bytes, length);
    t->length += length;
    t->data[t->length] = 0;
    return 1;
}

// The headers kept from a response; repeated ones are joined with ", " (RFC 9110 5.3).
enum { H_ETAG, H_LAST_MODIFIED, H_CACHE_CONTROL, H_EXPIRES, H_DATE, H_AGE, H_RETRY_AFTER, H_COUNT };
static const char *const kept_headers[H_COUNT] = {
    "ETag", "Last-Modified", "Cache-Control", "Expires", "Date", "Age", "Retry-After",
};

typedef struct {
    ph_fetch_result *result;
    size_t capacity;
    long long max_bytes;
    ph_cancel_flag *cancel;
    int block_private;
    int allow_loopback;
    long long max_header_bytes;
    long long header_bytes;           // of the current response
    int in_headers;                   // a response's header block is not complete yet
    text headers[H_COUNT];
    CURL *curl;
    const char *allowed_hosts;
} transfer_state;

// Every connection curl opens, for the first URL and for each redirect, after DNS: the check
// sees the address actually connected to, so neither DNS rebinding nor a redirect avoids it.
static curl_socket_t on_open_socket(void *userdata, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    transfer_state *state = userdata;
    if (state->block_private) {
        const char *class = ph_address_class(&address->addr);
        if (class && !(state->allow_loopback && strcmp(class, "loopback") == 0)) {
            ph_fetch_result *r = state->result;
            r->blocked = 1;
            char host[INET6_ADDRSTRLEN] = "?";
            if (address->family == AF_INET)
                inet_ntop(AF_INET, &((struct sockaddr_in *)&address->addr)->sin_addr, host, sizeof host);
            else if (address->family == AF_INET6)
                inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&address->addr)->sin6_addr, host, sizeof host);
            snprintf(r->blocked_address, sizeof r->blocked_address, "%s (%s)", host, class);
            return CURL_SOCKET_BAD;
        }
    }
    return socket(address->family, address->socktype, address->protocol);
}

// Before every request, the first and each redirect's, on its connection: the URL as libcurl
// now reads it must name an allowed host, so a redirect is held to the list the source was.
static int on_prereq(void *userdata, char *primary_ip, char *local_ip, int primary_port, int local_port) {
    (void)primary_ip; (void)local_ip; (void)primary_port; (void)local_port;
    transfer_state *state = userdata;
    if (!state->allowed_hosts || !*state->allowed_hosts) return CURL_PREREQFUNC_OK;
    char *url = NULL, host[256] = "";
    long port = -1;
    curl_easy_getinfo(state->curl, CURLINFO_EFFECTIVE_URL, &url);
    if (url && ph_url_host(url, host, sizeof host, &port) && host_allowed(state->allowed_hosts, host))
        return CURL_PREREQFUNC_OK;
    state->result->host_refused = 1;
    snprintf(state->result->refused_host, sizeof state->result->refused_host, "%s", host[0] ? host : "?");
    return CURL_PREREQFUNC_ABORT;
}

static size_t on_body(char *data, size_t size, size_t count, void *userdata) {
    transfer_state *state = userdata;
    ph_fetch_result *r = state->result;
    size_t length = size * count;
    if (state->max_bytes > 0 && (long long)(r->body_length + length) > state->max_bytes) {
        r->too_large = 1;
        return 0;  // any short count aborts the transfer
    }
    if (r->body_length + length > state->capacity) {
        size_t capacity = state->capacity ? state->capacity : 64 * 1024;
        while (capacity < r->body_length + length) capacity *= 2;
        unsigned char *grown = realloc(r->body, capacity);
        if (!grown) return 0;  // any short count aborts the transfer
        r->body = grown;
        state->capacity = capacity;
    }
    memcpy(r->body + r->body_length, data, length);
    r->body_length += length;
    return length;
}

static int cancelled(transfer_state *state) {
    if (state->cancel && atomic_load(&state->cancel->set)) {
        state->result->cancelled = 1;
        return 1;
    }
    return 0;
}

// One header line at a time, as it arrives. A status line starts a new response (after a
// redirect or a 1xx), whose headers replace the ones kept so far.
static size_t on_header(char *line, size_t size, size_t count, void *userdata) {
    transfer_state *state = userdata;
    size_t length = size * count;
    if (cancelled(state)) return 0;
    if (length <= 2 && (line[0] == '\r' || line[0] == '\n')) state->in_headers = 0;  // the blank line ends the block
    if (length >= 5 && memcmp(line, "HTTP/", 5) == 0) {
        state->in_headers = 1;
        state->header_bytes = 0;
        for (int i = 0; i < H_COUNT; i++) state->headers[i].length = 0;
    }
    state->header_bytes += (long long)length;
    if (state->max_header_bytes > 0 && state->header_bytes > state->max_header_bytes) {
        state->result->headers_too_large = 1;
        return 0;  // any short count aborts the transfer
    }
    const char *colon = memchr(line, ':', length);
    if (!colon) return length;
    size_t name_length = (size_t)(colon - line);
    const char *value = colon + 1, *end = line + length;
    while (value < end && (*value == ' ' || *value == '\t')) value++;
    while (end > value && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t')) end--;
    for (int i = 0; i < H_COUNT; i++) {
        if (strlen(kept_headers[i]) == name_length && strncasecmp(line, kept_headers[i], name_length) == 0) {
            if (!text_append(&state->headers[i], value, (size_t)(end - value), ", ")) return 0;
            break;
        }
    }
    return length;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow) {
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    return cancelled(userdata);
}

static char *copy_string(const char *s) { return s ? strdup(s) : NULL; }

// The kept header's text, malloc'd, or NULL when the response had none.
static char *header_copy(const transfer_state *state, int which) {
    const text *t = &state->headers[which];
    return t->length ? strdup(t->data) : NULL;
}

static long long header_date(const transfer_state *state, int which) {
    if (!state->headers[which].length) return -1;
    time_t when = curl_getdate(state->headers[which].data, NULL);
    return when < 0 ? -1 : (long long)when;
}

static void read_cache_headers(const transfer_state *state, ph_cache_headers *c) {
    c->etag = header_copy(state, H_ETAG);
    c->last_modified = header_copy(state, H_LAST_MODIFIED);
    c->cache_control = header_copy(state, H_CACHE_CONTROL);
    c->expires = header_copy(state, H_EXPIRES);
    c->expires_epoch = header_date(state, H_EXPIRES);
    c->date_epoch = header_date(state, H_DATE);
    c->age = state->headers[H_AGE].length ? strtoll(state->headers[H_AGE].data, NULL, 10) : -1;
}

// Retry-After is either delay-seconds or an HTTP date (RFC 9110 10.2.3).
static long long retry_after(const transfer_state *state) {
    const text *t = &state->headers[H_RETRY_AFTER];
    if (!t->length) return -1;
    char *end = NULL;
    long long seconds = strtoll(t->data, &end, 10);
    if (end == t->data || *end != 0 || seconds < 0) {
        time_t when = curl_getdate(t->data, NULL);
        seconds = when < 0 ? -1 : (long long)when - (long long)time(NULL);
        if (when >= 0 && seconds < 0) seconds = 0;
    }
    return seconds;
}

void ph_fetch(const ph_fetch_options *o, ph_fetch_result *r) {
    memset(r, 0, sizeof *r);
    r->retry_after = -1;
    CURL *curl = curl_easy_init();
    if (!curl) {
        r->curl_code = CURLE_FAILED_INIT;
        strcpy(r->error, "cannot create a curl handle");
        return;
    }
    transfer_state state = {r, 0, o->max_bytes, o->cancel, o->block_private, o->allow_loopback, o->max_header_bytes, 0, 1,
                            {{0}}, curl, o->allowed_hosts};
    if (o->cancel && atomic_load(&o->cancel->set)) {
        r->cancelled = 1;
        r->curl_code = CURLE_ABORTED_BY_CALLBACK;
        curl_easy_cleanup(curl);
        return;
    }
    // The transfer uses exactly this parse, and only once it names what the caller checked.
    CURLU *url = curl_url();
    char host[256] = "";
    long port = -1;
    if (!url || curl_url_set(url, CURLUPART_URL, o->url, 0) != CURLUE_OK) {
        r->curl_code = CURLE_URL_MALFORMAT;
        snprintf(r->error, sizeof r->error, "libcurl cannot parse the URL");
        curl_url_cleanup(url);
        curl_easy_cleanup(curl);
        return;
    }
    if (o->expected_host && (!url_host(url, host, sizeof host, &port) || strcmp(host, o->expected_host) != 0
                             || port != o->expected_port)) {
        r->misread = 1;
        snprintf(r->refused_host, sizeof r->refused_host, "%s", host[0] ? host : "?");
        r->curl_code = CURLE_URL_MALFORMAT;
        curl_url_cleanup(url);
        curl_easy_cleanup(curl);
        return;
    }
    curl_easy_setopt(curl, CURLOPT_CURLU, url);
    curl_easy_setopt(curl, CURLOPT_PREREQFUNCTION, on_prereq);
    curl_easy_setopt(curl, CURLOPT_PREREQDATA, &state);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, r->error);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, o->max_redirects);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, o->timeout_ms);
    if (o->user_agent) curl_easy_setopt(curl, CURLOPT_USERAGENT, o->user_agent);
    if (o->protocols) curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, o->protocols);
    if (o->redirect_protocols) curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, o->redirect_protocols);
    if (o->max_bytes > 0) curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)o->max_bytes);
    if (o->share) curl_easy_setopt(curl, CURLOPT_SHARE, o->share->handle);
    if (o->low_speed_limit > 0 && o->low_speed_time > 0) {
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, o->low_speed_limit);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, o->low_speed_time);
    }
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, &state);
    struct curl_slist *headers = NULL;
    char line[1024];
    if (o->if_none_match && strlen(o->if_none_match) < 900) {
        snprintf(line, sizeof line, "If-None-Match: %s", o->if_none_match);
        headers = curl_slist_append(headers, line);
    }
    if (o->if_modified_since && strlen(o->if_modified_since) < 900) {
        snprintf(line, sizeof line, "If-Modified-Since: %s", o->if_modified_since);
        headers = curl_slist_append(headers, line);
    }
    if (o->aws_sigv4 && o->aws_credentials) {
        // libcurl signs the method, path, query, host, x-amz-date and every header set here.
        // S3 also wants the payload's hash: UNSIGNED-PAYLOAD, since TLS (or the loopback) already
        // protects the body and a PUT then needs no second pass over it.
        curl_easy_setopt(curl, CURLOPT_AWS_SIGV4, o->aws_sigv4);
        curl_easy_setopt(curl, CURLOPT_USERPWD, o->aws_credentials);
        headers = curl_slist_append(headers, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
        if (o->aws_session_token && strlen(o->aws_session_token) < 4000) {
            char *token_line = malloc(strlen(o->aws_session_token) + 32);
            if (token_line) {
                sprintf(token_line, "x-amz-security-token: %s", o->aws_session_token);
                headers = curl_slist_append(headers, token_line);
                free(token_line);
            }
        }
    }
    if (o->extra_header && strlen(o->extra_header) < 900) headers = curl_slist_append(headers, o->extra_header);
    // The caller checked each line (no control characters, 512 bytes at most); split on '\n'.
    if (o->trace_headers && strlen(o->trace_headers) < 2048) {
        char line[1024];
        const char *start = o->trace_headers;
        while (*start) {
            const char *end = strchr(start, '\n');
            size_t length = end ? (size_t)(end - start) : strlen(start);
            if (length > 0 && length < sizeof line) {
                memcpy(line, start, length);
                line[length] = 0;
                headers = curl_slist_append(headers, line);
            }
            if (!end) break;
            start = end + 1;
        }
    }
    if (o->method && strcmp(o->method, "GET") != 0) {
        if (strcmp(o->method, "HEAD") == 0) {
            curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
        } else {
            curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, o->method);
        }
    }
    if (o->upload) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->upload_length);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, o->upload);
        snprintf(line, sizeof line, "Content-Type: %s",
                 o->content_type && strlen(o->content_type) < 200 ? o->content_type : "application/octet-stream");
        headers = curl_slist_append(headers, line);
        // (No "Expect:" line to turn 100-continue off: libcurl would sign that header too, and
        // the signature would then not match what is sent.)
    }
    if (headers) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    // libcurl keeps 5 idle connections by default; a batch over several hosts with 8 transfers
    // at once would close connections it is about to reuse.
    curl_easy_setopt(curl, CURLOPT_MAXCONNECTS, 64L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &state);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &state);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &state);

    r->curl_code = (int)curl_easy_perform(curl);
    if (r->curl_code == CURLE_FILESIZE_EXCEEDED) r->too_large = 1;
    // libcurl's own header limits (100 KB a line, 300 KB a response) bind before ours can see
    // the line: 7.x reports them as out of memory or a receive error, 8.6+ as CURLE_TOO_LARGE
    // (100). Met inside a header block they are headers too large, not a transport failure,
    // and nothing to retry.
    if (state.in_headers && (r->curl_code == CURLE_OUT_OF_MEMORY || r->curl_code == 100
                             || (r->curl_code == CURLE_RECV_ERROR && state.header_bytes >= 100 * 1024)))
        r->headers_too_large = 2;

    char *content_type = NULL, *effective_url = NULL;
    long connects = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &r->http_status);
    curl_easy_getinfo(curl, CURLINFO_REDIRECT_COUNT, &r->redirects);
    curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
    curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &content_type);
    curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective_url);
    r->connect_count = connects;
    r->content_type = copy_string(content_type);
    r->effective_url = copy_string(effective_url);
    r->cache.expires_epoch = r->cache.date_epoch = r->cache.age = -1;
    if (r->curl_code == CURLE_OK && r->http_status != 0) {
        read_cache_headers(&state, &r->cache);
        if (r->http_status == 429 || r->http_status >= 500) r->retry_after = retry_after(&state);
    }
    for (int i = 0; i < H_COUNT; i++) free(state.headers[i].data);
    curl_easy_cleanup(curl);
    curl_url_cleanup(url);
    curl_slist_free_all(headers);
}

void ph_fetch_result_free(ph_fetch_result *r) {
    free(r->body);
    free(r->content_type);
    free(r->effective_url);
    free(r->cache.etag);
    free(r->cache.last_modified);
    free(r->cache.cache_control);
    free(r->cache.expires);
    memset(&r->cache, 0, sizeof r->cache);
    r->body = NULL;
    r->content_type = NULL;
    r->effective_url = NULL;
}

unsigned char *ph_fetch_take_body(ph_fetch_result *r, size_t *length) {
    unsigned char *body = r->body;
    *length = body ? r->body_length : 0;
    r->body = NULL;
    r->body_length = 0;
    return body;
}
