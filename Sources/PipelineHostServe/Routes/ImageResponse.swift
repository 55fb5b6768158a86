import Crypto
import HTTPTypes
import Hummingbird
import PipelineHost

#if canImport(Glibc)
    import Glibc
#endif

/// A finished result as HTTP: the actual format's Content-Type, a strong ETag of the key and
/// the bytes, Cache-Control from the variant's freshness, and 304 for a matching If-None-Match.
struct ImageResponse {
    let result: PipelineResult
    /// The request headers the answer followed (Accept for an auto format, a client hint's),
    /// so caches must key on them.
    let vary: [String]
    let defaultMaxAge: Int

    /// The strong validator: equal only for the same key and the same bytes.
    var etag: String {
        var hasher = SHA256()
        hasher.update(data: Array(result.key.utf8))
        hasher.update(bufferPointer: result.bytes.buffer)
        return "\"" + hasher.finalize().prefix(16).hexDigits + "\""
    }

    /// "cache result" for the access log and X-Cache: the tier that answered, "joined" for
    /// work another request had started, else "miss".
    var cacheResult: String {
        result.memoryHit
            ? "memory"
            : result.diskHit
                ? "disk" : result.sharedHit ? result.sharedTier ?? "shared" : result.coalesced ? "joined" : "miss"
    }

    func response(for request: Request) -> Response {
        let tag = etag
        var headers: HTTPFields = [:]
        headers[.eTag] = tag
        headers[.cacheControl] = cacheControl
        headers[Self.xCache] = cacheResult
        if !vary.isEmpty { headers[.vary] = vary.joined(separator: ", ") }
        if Self.matches(request.headers[.ifNoneMatch], tag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = FormatChoice.mediaType(result.format)
        headers[.contentLength] = String(result.bytes.count)
        if request.method == .head { return Response(status: .ok, headers: headers) }
        return Response(status: .ok, headers: headers, body: Self.body(result.bytes))
    }

    /// The bytes in pieces of `chunkSize`, each copied only when the last one was taken by the
    /// socket (the writer waits while the channel is not writable): a connection whose client
    /// does not read holds one piece, not a copy of the whole answer, while the bytes themselves
    /// are shared with the cache.
    static func body(_ bytes: ImageBytes) -> ResponseBody {
        ResponseBody(contentLength: bytes.count) { writer in
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + chunkSize)
                try await writer.write(ByteBuffer(bytes: UnsafeRawBufferPointer(rebasing: bytes.buffer[offset..<end])))
                offset = end
            }
            try await writer.finish(nil)
        }
    }

    static let chunkSize = 64 * 1024

    /// `public, max-age=` the seconds the result stays fresh: what the origin and the cache
    /// stages said, else the default. `no-store` when the origin said so.
    var cacheControl: String {
        if result.noStore { return "no-store" }
        guard let expiresAt = result.expiresAt else { return "public, max-age=\(defaultMaxAge)" }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return "public, max-age=\(max(0, Int(expiresAt - Double(now.tv_sec))))"
    }

    static let xCache = HTTPField.Name("X-Cache")!

    /// If-None-Match: "*" or a list that holds the tag (weak forms compare equal, RFC 9110 §13.1.2).
    static func matches(_ header: String?, _ tag: String) -> Bool {
        guard let header else { return false }
        return header.split(separator: ",").contains { item in
            let value = item.filter { $0 != " " }
            return value == "*" || value == tag || value == "W/" + tag
        }
    }
}
