// One blocking hiredis connection with a timeout on every call, and fixed-arity commands.
// hiredis' redisCommand is variadic; these take argv arrays, so binary values need no escaping.
#ifndef PH_REDIS_H
#define PH_REDIS_H

#include <stddef.h>

/// One connection. Not thread safe: one thread uses it at a time (the Swift pool hands it out).
typedef struct ph_redis ph_redis;

/// Connects to host:port, sends AUTH when `password` is not NULL (with `user`, an ACL user, when
/// that is not NULL too), and SELECTs db when it is not 0, with `timeout_ms` for the connect and
/// for every later call. NULL on failure, with the reason in `error` (never the password);
/// `refused` is set to 1 when Redis answered but refused the credentials or asked for some.
ph_redis *ph_redis_connect(const char *host, int port, int db, int timeout_ms, const char *user, const char *password,
                           int *refused, char *error, size_t error_size);
void ph_redis_free(ph_redis *redis);

typedef enum {
    PH_REDIS_STRING = 1,
    PH_REDIS_ARRAY = 2,
    PH_REDIS_INTEGER = 3,
    PH_REDIS_NIL = 4,
    PH_REDIS_STATUS = 5,
    PH_REDIS_ERROR = 6,
} ph_redis_kind;

/// A reply: its kind, an integer, or bytes (a string, status or error text) owned by the reply.
typedef struct {
    ph_redis_kind kind;
    long long integer;
    unsigned char *data;
    size_t length;
} ph_redis_reply;

/// Runs one command. Returns 0 with `out` filled (free it with ph_redis_reply_free), or -1 when
/// the connection failed or timed out; the connection is then unusable, and `error` says why.
int ph_redis_command(ph_redis *redis, int argc, const char **argv, const size_t *lengths, ph_redis_reply *out,
                     char *error, size_t error_size);
void ph_redis_reply_free(ph_redis_reply *reply);

/// Sends SUBSCRIBE `channel` and reads its confirmation; the connection is then for messages
/// only. Returns 0, or -1 with the reason in `error`.
int ph_redis_subscribe(ph_redis *redis, const char *channel, char *error, size_t error_size);

/// Waits up to `timeout_ms` for the next message on a subscribed connection. Returns 1 with
/// its payload in `payload` (free it with ph_redis_reply_free), 0 when none came in time, or
/// -1 when the connection failed.
int ph_redis_next_message(ph_redis *redis, int timeout_ms, ph_redis_reply *payload, char *error, size_t error_size);

/// One range of a Redis Cluster's slot map and the master that serves it. `host` is empty when
/// the node did not say (Redis then means the node that was asked).
typedef struct {
    int start;
    int end;
    char host[256];
    int port;
} ph_redis_slot_range;

/// Asks `CLUSTER SLOTS` and writes each range's master into `ranges` (at most `capacity`).
/// Returns how many ranges the map has, -1 when the connection failed or timed out (unusable
/// then; `error` says why), or -2 when Redis answered with an error (it is no cluster), with the
/// error in `error`.
int ph_redis_cluster_slots(ph_redis *redis, ph_redis_slot_range *ranges, int capacity, char *error, size_t error_size);

#endif
