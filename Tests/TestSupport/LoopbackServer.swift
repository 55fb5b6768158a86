import Foundation
import Glibc
import PipelineHost

/// An HTTP/1.1 server on 127.0.0.1 that tests start themselves. It counts requests per path and
/// connections, and can delay, fail with a status, truncate a body, drip it, stall it on a gate,
/// or redirect.
///
/// It is written on plain sockets on purpose: tests need to misbehave on the wire (announce more
/// bytes than they send, close mid-body) in ways a proper HTTP server library prevents.
public final class LoopbackServer: Sendable {
    public indirect enum Response: Sendable {
        case ok([UInt8], contentType: String = "application/octet-stream")
        case status(Int, body: [UInt8] = [], contentType: String = "text/plain")
        case redirect(to: String, status: Int = 302)
        /// Waits, then answers.
        case delayed(seconds: Double, Response)
        /// Announces `body.count + missing` bytes, sends `body`, and closes the connection.
        case truncated([UInt8], missing: Int)
        /// Sends the body in small pieces with a pause after each.
        case drip([UInt8], chunk: Int, pause: Double)
        /// Holds the request until the test calls `open(gate)`, then answers. A client that
        /// leaves meanwhile is counted in `abortedCount`.
        case held(gate: String, Response)
        /// Sends the head and the first `sent` bytes of the body, then holds the rest until the
        /// test calls `open(gate)`: a transfer under way that cannot finish before the test says
        /// so, however fast or slow the machine. A client that leaves meanwhile is counted in
        /// `abortedCount`. With a gate the test never opens, it is a server that stops sending.
        case stalled([UInt8], gate: String, sent: Int = 100)
        /// A Subsonic server: answers when the query carries valid auth for `user`/`password`
        /// (u, t = md5(password + s), s; or p=enc:<hex>), and otherwise sends Subsonic's error
        /// document with status 200, as real servers do.
        case subsonic(user: String, password: String, Response)
        /// An image with an ETag and Cache-Control, as a CDN serves it: a request whose
        /// If-None-Match carries the ETag gets 304 Not Modified with no body.
        case cacheable([UInt8], etag: String, cacheControl: String, contentType: String = "image/jpeg")
        /// `Response` with these headers added (Cache-Control, Expires, ...).
        case headers([String: String], Response)
        /// `Response` with the header `name: value` sent `count` times, on lines of its own.
        case repeatedHeader(name: String, value: String, count: Int, Response)
        /// The first request to the path gets the first response, the second the second, and
        /// so on; the last one answers every request after that.
        case sequence([Response])
        /// Closes the connection without answering: a server that dies mid-request.
        case hangUp
    }

    private struct State {
        var routes: [String: Response] = [:]
        var counts: [String: Int] = [:]
        var queries: [String: [String]] = [:]
        var connections = 0
        var running = true
        var log: [String] = []
        var aborted: [String: Int] = [:]
        var notModified: [String: Int] = [:]
        var requestHeaders: [String: [[String: String]]] = [:]
        var openGates: Set<String> = []
    }

    public let port: UInt16
    private let listener: Int32
    private let state = Locked(State())
    /// Whether each request's query and headers are kept, and the request log. A soak run
    /// turns it off so the server's own memory stays flat; counts are always kept.
    private let recording: Bool

    /// The address it listens on: 127.0.0.1, or another of this machine's (a test across
    /// network namespaces gives the host's end of a link).
    public let host: String

    public init(recording: Bool = true, host: String = "127.0.0.1") throws {
        self.recording = recording
        self.host = host
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            close(fd)
            throw ServerError("bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    public var baseURL: String { "http://\(host):\(port)" }

    /// The URL of `path` on this server ("/photo.jpg?id=1" -> "http://127.0.0.1:PORT/photo.jpg?id=1").
    public func url(_ path: String) -> String { baseURL + path }

    /// Serves `response` for `path` (query strings are ignored when routing).
    public func route(_ path: String, _ response: Response) {
        state.withLock { $0.routes[path] = response }
    }

    /// How many requests reached `path`.
    public func requestCount(_ path: String) -> Int { state.withLock { $0.counts[path, default: 0] } }

    /// The query strings `path` was requested with, in order.
    public func queries(_ path: String) -> [String] { state.withLock { $0.queries[path, default: []] } }

    /// Every request's path, in the order they arrived.
    public var requestLog: [String] { state.withLock { $0.log } }

    /// How many answers to `path` the client cut off by closing the connection before their end.
    public func abortedCount(_ path: String) -> Int { state.withLock { $0.aborted[path, default: 0] } }

    /// Lets requests held at `gate` be answered (and any that arrive later).
    public func open(_ gate: String) { state.withLock { _ = $0.openGates.insert(gate) } }

    /// How many requests to `path` were answered 304 Not Modified.
    public func notModifiedCount(_ path: String) -> Int { state.withLock { $0.notModified[path, default: 0] } }

    /// The headers of each request to `path`, names lowercased, in order.
    public func requestHeaders(_ path: String) -> [[String: String]] {
        state.withLock { $0.requestHeaders[path, default: []] }
    }

    /// How many TCP connections clients opened.
    public var connectionCount: Int { state.withLock { $0.connections } }

    public func stop() {
        let wasRunning = state.withLock { s in
            defer { s.running = false }
            return s.running
        }
        if wasRunning {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
    }

    private func acceptLoop() {
        while state.withLock({ $0.running }) {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            state.withLock { $0.connections += 1 }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var buffer: [UInt8] = []
        while let request = readRequest(client, &buffer) {
            let response = state.withLock { s -> Response in
                s.counts[request.path, default: 0] += 1
                if recording {
                    s.queries[request.path, default: []].append(request.query)
                    s.log.append(request.path)
                    s.requestHeaders[request.path, default: []].append(request.headers)
                }
                let route = s.routes[request.path] ?? .status(404, body: Array("not found\n".utf8))
                if case .sequence(let responses) = route, !responses.isEmpty {
                    return responses[min(s.counts[request.path]! - 1, responses.count - 1)]
                }
                return route
            }
            guard respond(response, on: client, request: request), !request.close else { return }
        }
    }

    private struct Request {
        let path: String
        let query: String
        let close: Bool
        let headers: [String: String]
    }

    private func readRequest(_ fd: Int32, _ buffer: inout [UInt8]) -> Request? {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let range = buffer.firstRange(of: end) {
                let head = String(decoding: buffer[..<range.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<range.upperBound)
                let lines = head.components(separatedBy: "\r\n")
                let parts = lines.first?.split(separator: " ") ?? []
                guard parts.count >= 2 else { return nil }
                let target = String(parts[1])
                let pieces = target.split(separator: "?", maxSplits: 1).map(String.init)
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                        in: .whitespaces)
                }
                return Request(
                    path: pieces.first ?? "/", query: pieces.count > 1 ? pieces[1] : "",
                    close: headers["connection"]?.lowercased() == "close", headers: headers)
            }
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<n])
        }
    }

    /// Returns false when the connection must close. `extra` headers go with a plain answer.
    private func respond(_ response: Response, on fd: Int32, request: Request, extra: [String: String] = [:]) -> Bool {
        let path = request.path, query = request.query
        switch response {
        case .ok(let body, let contentType):
            return send(fd, status: 200, headers: extra.merging(["Content-Type": contentType]) { $1 }, body: body)
        case .status(let code, let body, let contentType):
            return send(fd, status: code, headers: extra.merging(["Content-Type": contentType]) { $1 }, body: body)
        case .headers(let headers, let inner):
            return respond(inner, on: fd, request: request, extra: extra.merging(headers) { $1 })
        case .repeatedHeader(let name, let value, let count, let inner):
            // One entry whose value carries the other count - 1 lines: header() writes it as is.
            let lines = Array(repeating: value, count: max(count, 1)).joined(separator: "\r\n\(name): ")
            return respond(inner, on: fd, request: request, extra: extra.merging([name: lines]) { $1 })
        case .cacheable(let body, let etag, let cacheControl, let contentType):
            let headers = extra.merging(["ETag": etag, "Cache-Control": cacheControl]) { $1 }
            if request.headers["if-none-match"] == etag {
                state.withLock { $0.notModified[path, default: 0] += 1 }
                return send(fd, status: 304, headers: headers, body: [])
            }
            return send(fd, status: 200, headers: headers.merging(["Content-Type": contentType]) { $1 }, body: body)
        case .redirect(let location, let code):
            return send(fd, status: code, headers: ["Location": location], body: [])
        case .delayed(let seconds, let inner):
            Thread.sleep(forTimeInterval: seconds)
            return respond(inner, on: fd, request: request, extra: extra)
        case .subsonic(let user, let password, let inner):
            if SubsonicAuthCheck.valid(query: query, user: user, password: password) {
                return respond(inner, on: fd, request: request, extra: extra)
            }
            let error =
                #"<subsonic-response status="failed" version="1.16.1"><error code="40" message="Wrong username or password"/></subsonic-response>"#
            return send(fd, status: 200, headers: ["Content-Type": "text/xml"], body: Array(error.utf8))
        case .held(let gate, let inner):
            guard hold(fd, at: gate, path: path) else { return false }
            return respond(inner, on: fd, request: request, extra: extra)
        case .stalled(let body, let gate, let sent):
            let head = Array(header(200, ["Content-Type": "image/jpeg"], length: body.count).utf8)
            let first = min(max(sent, 0), body.count)
            guard writeAll(fd, head + body[..<first]), hold(fd, at: gate, path: path) else { return false }
            return writeAll(fd, Array(body[first...]))
        case .sequence(let responses):
            return respond(responses.last ?? .status(404), on: fd, request: request, extra: extra)
        case .hangUp:
            return false
        case .truncated(let body, let missing):
            _ = send(
                fd, status: 200, headers: ["Content-Type": "image/jpeg"], body: body,
                declaredLength: body.count + missing)
            return false
        case .drip(let body, let size, let pause):
            guard writeAll(fd, Array(header(200, ["Content-Type": "image/jpeg"], length: body.count).utf8)) else {
                return false
            }
            var offset = 0
            while offset < body.count {
                let end = min(offset + size, body.count)
                guard writeAll(fd, Array(body[offset..<end])) else {
                    state.withLock { $0.aborted[path, default: 0] += 1 }
                    return false
                }
                offset = end
                Thread.sleep(forTimeInterval: pause)
            }
            return true
        }
    }

    /// Waits until `gate` opens or the server stops (true), or until the client closes the
    /// connection (false, counted as aborted). The client's leaving is an event the test can
    /// wait for, not a write that happens to fail later.
    private func hold(_ fd: Int32, at gate: String, path: String) -> Bool {
        while !state.withLock({ $0.openGates.contains(gate) || !$0.running }) {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 5) > 0 else { continue }
            var byte: UInt8 = 0
            // Readable with nothing to read, or an error: the client is gone. A byte waiting is
            // a pipelined request, read later.
            if poller.revents & Int16(POLLHUP | POLLERR) != 0 || recv(fd, &byte, 1, Int32(MSG_PEEK)) <= 0 {
                state.withLock { $0.aborted[path, default: 0] += 1 }
                return false
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return true
    }

    private func header(_ status: Int, _ headers: [String: String], length: Int) -> String {
        var text = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Status")\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        return text + "Content-Length: \(length)\r\n\r\n"
    }

    private func send(
        _ fd: Int32, status: Int, headers: [String: String], body: [UInt8],
        declaredLength: Int? = nil
    ) -> Bool {
        writeAll(fd, Array(header(status, headers, length: declaredLength ?? body.count).utf8) + body)
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }
}

public struct ServerError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
