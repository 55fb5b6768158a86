#include "ph_redis.h"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

struct ph_redis {
    redisContext *context;
};

static struct timeval timeout_of(int ms) {
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    return tv;
}

static void set_error(char *error, size_t size, const char *text) {
    if (error && size) snprintf(error, size, "%s", text ? text : "unknown error");
}

// Runs one command whose reply must not be an error; an error reply is a refusal (AUTH, or
// SELECT on a server that wants AUTH first).
static int setup_command(ph_redis *redis, int argc, const char **argv, int *refused, char *error, size_t error_size) {
    size_t lengths[3];
    for (int i = 0; i < argc; i++) lengths[i] = strlen(argv[i]);
    ph_redis_reply reply;
    if (ph_redis_command(redis, argc, argv, lengths, &reply, error, error_size) != 0) return -1;
    int failed = reply.kind == PH_REDIS_ERROR;
    if (failed) {
        set_error(error, error_size, (const char *)reply.data);
        if (refused) *refused = 1;
    }
    ph_redis_reply_free(&reply);
    return failed ? -1 : 0;
}

ph_redis *ph_redis_connect(const char *host, int port, int db, int timeout_ms, const char *user, const char *password,
                           int *refused, char *error, size_t error_size) {
    if (refused) *refused = 0;
    redisContext *context = redisConnectWithTimeout(host, port, timeout_of(timeout_ms));
    if (!context) {
        set_error(error, error_size, "out of memory");
        return NULL;
    }
    if (context->err || redisSetTimeout(context, timeout_of(timeout_ms)) != REDIS_OK) {
        set_error(error, error_size, context->errstr);
        redisFree(context);
        return NULL;
    }
    ph_redis *redis = calloc(1, sizeof *redis);
    if (!redis) {
        redisFree(context);
        set_error(error, error_size, "out of memory");
        return NULL;
    }
    redis->context = context;
    if (password) {
        const char *with_user[] = {"AUTH", user, password};
        const char *alone[] = {"AUTH", password};
        if (setup_command(redis, user ? 3 : 2, user ? with_user : alone, refused, error, error_size) != 0) {
            ph_redis_free(redis);
            return NULL;
        }
    }
    if (db != 0) {
        char number[16];
        snprintf(number, sizeof number, "%d", db);
        const char *argv[] = {"SELECT", number};
        if (setup_command(redis, 2, argv, NULL, error, error_size) != 0) {
            if (refused && strncmp(error, "NOAUTH", 6) == 0) *refused = 1;
            ph_redis_free(redis);
            return NULL;
        }
    }
    return redis;
}

void ph_redis_free(ph_redis *redis) {
    if (!redis) return;
    redisFree(redis->context);
    free(redis);
}

int ph_redis_command(ph_redis *redis, int argc, const char **argv, const size_t *lengths, ph_redis_reply *out,
                     char *error, size_t error_size) {
    memset(out, 0, sizeof *out);
    if (!redis || redis->context->err) {
        set_error(error, error_size, redis ? redis->context->errstr : "no connection");
        return -1;
    }
    redisReply *reply = redisCommandArgv(redis->context, argc, argv, lengths);
    if (!reply) {
        set_error(error, error_size, redis->context->errstr);
        return -1;
    }
    out->kind = (ph_redis_kind)reply->type;
    out->integer = reply->integer;
    if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS || reply->type == REDIS_REPLY_ERROR) {
        // One byte more, so error and status texts can be read as C strings.
        out->data = malloc(reply->len + 1);
        if (!out->data) {
            freeReplyObject(reply);
            set_error(error, error_size, "out of memory");
            return -1;
        }
        memcpy(out->data, reply->str, reply->len);
        out->data[reply->len] = 0;
        out->length = reply->len;
    } else if (reply->type == REDIS_REPLY_ARRAY) {
        out->integer = (long long)reply->elements;
    }
    freeReplyObject(reply);
    return 0;
}

void ph_redis_reply_free(ph_redis_reply *reply) {
    free(reply->data);
    reply->data = NULL;
    reply->length = 0;
}

int ph_redis_subscribe(ph_redis *redis, const char *channel, char *error, size_t error_size) {
    const char *argv[] = {"SUBSCRIBE", channel};
    size_t lengths[] = {9, strlen(channel)};
    ph_redis_reply reply;
    if (ph_redis_command(redis, 2, argv, lengths, &reply, error, error_size) != 0) return -1;
    ph_redis_reply_free(&reply);
    return 0;
}

int ph_redis_next_message(ph_redis *redis, int timeout_ms, ph_redis_reply *payload, char *error, size_t error_size) {
    memset(payload, 0, sizeof *payload);
    redisContext *c = redis->context;
    void *raw = NULL;
    // A message may already sit in hiredis' buffer; only then wait for the socket.
    if (redisGetReplyFromReader(c, &raw) != REDIS_OK) goto failed;
    if (!raw) {
        struct pollfd ready = {c->fd, POLLIN, 0};
        int waited = poll(&ready, 1, timeout_ms);
        if (waited == 0) return 0;
        if (waited < 0 || redisBufferRead(c) != REDIS_OK || redisGetReplyFromReader(c, &raw) != REDIS_OK) goto failed;
        if (!raw) return 0;
    }
    redisReply *reply = raw;
    int found = 0;
    // ["message", channel, payload]
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 3 && reply->element[2]->type == REDIS_REPLY_STRING) {
        redisReply *body = reply->element[2];
        payload->data = malloc(body->len + 1);
        if (payload->data) {
            memcpy(payload->data, body->str, body->len);
            payload->data[body->len] = 0;
            payload->length = body->len;
            payload->kind = PH_REDIS_STRING;
            found = 1;
        }
    }
    freeReplyObject(reply);
    return found;
failed:
    set_error(error, error_size, c->errstr[0] ? c->errstr : "connection lost");
    return -1;
}

int ph_redis_cluster_slots(ph_redis *redis, ph_redis_slot_range *ranges, int capacity, char *error, size_t error_size) {
    if (!redis || redis->context->err) {
        set_error(error, error_size, redis ? redis->context->errstr : "no connection");
        return -1;
    }
    redisReply *reply = redisCommand(redis->context, "CLUSTER SLOTS");
    if (!reply) {
        set_error(error, error_size, redis->context->errstr);
        return -1;
    }
    int count = 0;
    if (reply->type == REDIS_REPLY_ERROR) {
        set_error(error, error_size, reply->str);
        count = -2;
    } else if (reply->type == REDIS_REPLY_ARRAY) {
        // [[start, end, [host, port, id, ...], replicas...], ...]: the first node is the master.
        for (size_t i = 0; i < reply->elements && count < capacity; i++) {
            redisReply *range = reply->element[i];
            if (range->type != REDIS_REPLY_ARRAY || range->elements < 3) continue;
            redisReply *master = range->element[2];
            if (range->element[0]->type != REDIS_REPLY_INTEGER || range->element[1]->type != REDIS_REPLY_INTEGER ||
                master->type != REDIS_REPLY_ARRAY || master->elements < 2 || master->element[1]->type != REDIS_REPLY_INTEGER)
                continue;
            ph_redis_slot_range *out = &ranges[count++];
            out->start = (int)range->element[0]->integer;
            out->end = (int)range->element[1]->integer;
            out->port = (int)master->element[1]->integer;
            out->host[0] = 0;
            redisReply *host = master->element[0];
            if (host->type == REDIS_REPLY_STRING && host->len < sizeof out->host && strcmp(host->str, "?") != 0) {
                memcpy(out->host, host->str, host->len);
                out->host[host->len] = 0;
            }
        }
    }
    freeReplyObject(reply);
    return count;
}
