#include "ph_redis.h"

#include <hiredis/hiredis.h>
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

ph_redis *ph_redis_connect(const char *host, int port, int db, int timeout_ms, char *error, size_t error_size) {
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
    if (db != 0) {
        char number[16];
        snprintf(number, sizeof number, "%d", db);
        const char *argv[] = {"SELECT", number};
        size_t lengths[] = {6, strlen(number)};
        ph_redis_reply reply;
        if (ph_redis_command(redis, 2, argv, lengths, &reply, error, error_size) != 0) {
            ph_redis_free(redis);
            return NULL;
        }
        int failed = reply.kind == PH_REDIS_ERROR;
        if (failed) set_error(error, error_size, (const char *)reply.data);
        ph_redis_reply_free(&reply);
        if (failed) {
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
