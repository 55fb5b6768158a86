// One blocking libcurl transfer with limits, a cancel flag and a shared connection cache.
// The callbacks (write, progress, locks) live here so no Swift closure is called from curl.
#ifndef PH_CURL_H
#define PH_CURL_H

#include <stddef.h>
#include <curl/curl.h>
#include <sys/socket.h>

/// Call once per process before any other ph_curl function.
int ph_curl_global_init(void);

/// A share handle for connections, DNS and TLS sessions, safe to use from several threads.
typedef struct ph_curl_share ph_curl_share;
ph_curl_share *ph_curl_share_new(void);
void ph_curl_share_free(ph_curl_share *share);

/// Set from any thread; the transfer notices it in its progress callback and aborts.
typedef struct ph_cancel_flag ph_cancel_flag;
ph_cancel_flag *ph_cancel_flag_new(void);
void ph_cancel_flag_set(ph_cancel_flag *flag);
void ph_cancel_flag_free(ph_cancel_flag *flag);

typedef struct {
    const char *url;
    const char *user_agent;
    const char *protocols;            // e.g. "http,https,file"
    const char *redirect_protocols;   // e.g. "http,https"
    long connect_timeout_ms;
    long timeout_ms;
    long max_redirects;
    long long max_bytes;
    ph_curl_share *share;             // may be NULL
    ph_cancel_flag *cancel;           // may be NULL
    const char *if_none_match;        // conditional request validators; may be NULL
    const char *if_modified_since;
    long low_speed_limit;             // bytes per second; 0 turns the low-speed check off
    long low_speed_time;              // seconds below low_speed_limit before giving up
    int block_private;                // refuse non-public addresses at connect time
    int allow_loopback;               // with block_private: still allow 127.0.0.0/8 and ::1
    long long max_header_bytes;       // largest header block of one response; 0: no limit
    const char *expected_host;        // the host the caller's policy and key saw; NULL for files.
                                      // libcurl's own parse of `url` must name it (and
                                      // expected_port), or nothing is fetched
    long expected_port;               // -1: no port written
    const char *allowed_hosts;        // comma-separated lower-case hosts the URL and every
                                      // redirect may name; NULL or "": any host
    // S3 and other AWS Signature V4 services, signed by libcurl (CURLOPT_AWS_SIGV4).
    const char *aws_sigv4;            // "aws:amz:REGION:s3"; NULL: not signed
    const char *aws_credentials;      // "ACCESS_KEY_ID:SECRET_ACCESS_KEY"
    const char *aws_session_token;    // sent (and signed) as x-amz-security-token; may be NULL
    const char *method;               // NULL: GET; "PUT", "DELETE", "HEAD"
    const unsigned char *upload;      // the request body for PUT; may be NULL
    size_t upload_length;
    const char *content_type;         // of the upload; may be NULL
    const char *extra_header;         // one more "Name: value" line; may be NULL
    const char *trace_headers;        // "Name: value" lines joined by '\n' (traceparent, tracestate); may be NULL
} ph_fetch_options;

/// The response headers a cache needs, from the last response (after redirects). They are
/// collected by the header callback while the transfer runs, so reading them is linear in the
/// header bytes and happens inside the timeout and the cancel check.
typedef struct {
    char *etag;                       // malloc'd or NULL, like every string here
    char *last_modified;
    char *cache_control;              // several Cache-Control headers are joined with ", "
    char *expires;
    long long expires_epoch;          // Expires parsed by curl_getdate; -1 when absent or invalid
    long long date_epoch;             // Date, likewise
    long long age;                    // Age in seconds; -1 when absent
} ph_cache_headers;

typedef struct {
    int curl_code;                    // CURLE_OK on a completed transfer (any HTTP status)
    long http_status;                 // 0 for file://
    long redirects;
    long long connect_count;          // new connections this transfer opened (0 when reused)
    int too_large;                    // stopped because the body passed max_bytes
    int headers_too_large;            // stopped because a response's headers passed max_header_bytes
                                      // (1), or libcurl's own limits (2)
    int cancelled;                    // stopped because the cancel flag was set
    int blocked;                      // a connection was refused by block_private
    char blocked_address[64];         // the address it was refused for
    int host_refused;                 // the URL or a redirect named a host not in allowed_hosts
    int misread;                      // libcurl reads another host or port than expected
    char refused_host[256];           // the host libcurl read, for either of the two
    long long retry_after;            // Retry-After in seconds from now; -1 when absent
    unsigned char *body;              // malloc'd; take it with ph_fetch_take_body
    size_t body_length;
    char *content_type;               // malloc'd or NULL
    char *effective_url;              // malloc'd or NULL
    ph_cache_headers cache;
    char error[CURL_ERROR_SIZE];
} ph_fetch_result;

/// Why an address is not public ("loopback", "private", "link-local", ...), or NULL when it
/// is. `address` is a sockaddr_in or sockaddr_in6; IPv4-mapped IPv6 addresses are unwrapped.
const char *ph_address_class(const struct sockaddr *address);

/// The same for an address in text form, for tests. "invalid" when it does not parse.
const char *ph_address_text_class(const char *text);

/// The host and port libcurl's URL parser reads in `url`, as the transfer would: the host
/// (lower-cased, IPv6 in brackets) into `host`, the port or -1 when none is written. Returns 0
/// when libcurl cannot parse the URL. For tests that hold our own parse to libcurl's.
int ph_url_host(const char *url, char *host, size_t host_size, long *port);

/// Runs the transfer to the end. Always fills `result`; release it with ph_fetch_result_free
/// (take the body first with ph_fetch_take_body to keep it).
void ph_fetch(const ph_fetch_options *options, ph_fetch_result *result);
void ph_fetch_result_free(ph_fetch_result *result);

/// Hands the body over to the caller (free it with free()) and leaves the result without one,
/// so ph_fetch_result_free does not free it too. NULL when there is no body.
unsigned char *ph_fetch_take_body(ph_fetch_result *result, size_t *length);

#endif
