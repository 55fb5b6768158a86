import Foundation
import Glibc

/// A client that asks and never reads: it pipelines requests on one connection with a small
/// receive buffer, so the server's answers back up at once, as a hostile or stuck client's do.
public final class SlowReader: Sendable {
    private let fd: Int32

    /// Connects to 127.0.0.1:`port` with a receive buffer of `receiveBuffer` bytes.
    public init(port: Int, receiveBuffer: Int32 = 4096) throws {
        guard let fd = connectLoopback(port: port, receiveBuffer: receiveBuffer) else {
            throw ServerError("cannot connect to 127.0.0.1:\(port)")
        }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// Sends `count` requests for `path` in one go, without reading anything.
    public func pipeline(_ path: String, count: Int) {
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let all = String(repeating: request, count: count)
        _ = all.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// Reads `bytes` at a time, `perSecond` times a second, on a thread of its own, until the
    /// server closes the connection: a client that takes its answer a trickle at a time.
    public func trickle(bytes: Int, perSecond: Int) {
        let fd = fd
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: bytes)
            while Glibc.recv(fd, &buffer, bytes, 0) > 0 { usleep(useconds_t(1_000_000 / perSecond)) }
        }
        thread.start()
    }

    /// Whether the server has closed the connection (a FIN or a reset), waiting up to `seconds`
    /// on a thread of its own. Nothing is read, so what the server sent stays unread.
    public func closedByServer(within seconds: Double) async throws -> Bool {
        let fd = fd
        return try await onOwnThread {
            // POLLRDHUP (0x2000, Linux; Glibc hides it behind _GNU_SOURCE): the peer closed.
            var poller = pollfd(fd: fd, events: 0x2000, revents: 0)
            return poll(&poller, 1, Int32(seconds * 1000)) > 0
        }
    }
}

/// What the kernel says about a process and its sockets, from /proc.
public enum ProcFacts {
    /// The resident set of process `pid`, in bytes.
    public static func residentBytes(_ pid: Int32) -> Int? {
        guard let status = read("/proc/\(pid)/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
        else { return nil }
        return kilobytes * 1024
    }

    /// The send queue, in bytes, of each established TCP connection whose local port is `port`
    /// (IPv4, /proc/net/tcp): what the server has written and its client has not taken.
    public static func sendQueues(localPort port: Int) -> [Int] {
        Array(sendQueuesByPeer(localPort: port).values)
    }

    /// The same, by the client's port: a test can note each connection it has seen stuck, since
    /// on a busy machine the first may be closed before the last is stuck.
    public static func sendQueuesByPeer(localPort port: Int) -> [Int: Int] {
        guard let table = read("/proc/net/tcp") else { return [:] }
        let hex = String(port, radix: 16, uppercase: true)
        let hexPort = String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        var queues: [Int: Int] = [:]
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // local_address rem_address st tx_queue:rx_queue ...; state 01 is ESTABLISHED.
            guard fields.count > 4, fields[1].hasSuffix(":" + hexPort), fields[3] == "01",
                let peer = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                let queue = Int(fields[4].split(separator: ":")[0], radix: 16)
            else { continue }
            queues[peer] = queue
        }
        return queues
    }

    /// Whether process `pid` has a handler of its own for `signal` (its SigCgt mask): the event
    /// a test waits for before it signals a process that must catch it.
    public static func catches(_ signal: Int32, pid: Int32) -> Bool {
        guard let status = read("/proc/\(pid)/status"),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
            let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(signal - 1)) != 0
    }

    /// A /proc file to its end: they report a size of 0, and a read by size stops at one page.
    private static func read(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return (try? handle.readToEnd()).map { String(decoding: $0, as: UTF8.self) }
    }
}
