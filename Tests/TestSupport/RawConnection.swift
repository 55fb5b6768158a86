import Foundation
import Glibc

/// A TCP connection to a loopback server that sends exactly the bytes a test gives, as a slow
/// or idle client would. Reads wait on a thread of their own, never on the test pool's.
public final class RawConnection: Sendable {
    private let fd: Int32

    public init(port: Int) throws {
        guard let connected = connectLoopback(port: port) else {
            throw ServerError("cannot connect to 127.0.0.1:\(port)")
        }
        fd = connected
    }

    deinit { Glibc.close(fd) }

    /// Ends the connection from this side (both directions).
    public func close() { shutdown(fd, Int32(SHUT_RDWR)) }

    public func send(_ text: String) {
        _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// What the server sends within `seconds`: its bytes, "" when it closed the connection, or
    /// nil when nothing came in that time.
    public func receive(within seconds: Double) async throws -> String? {
        let fd = fd
        return try await onOwnThread {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(seconds * 1000)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 65536)
            let count = recv(fd, &buffer, buffer.count, 0)
            return count <= 0 ? "" : String(decoding: buffer.prefix(count), as: UTF8.self)
        }
    }
}

extension RawConnection {
    /// Everything the server sends until it closes the connection, and whether it did close it
    /// within `seconds` of its last bytes.
    public func receiveUntilClosed(within seconds: Double) async throws -> (text: String, closed: Bool) {
        var text = ""
        while let part = try await receive(within: seconds) {
            if part.isEmpty { return (text, true) }
            text += part
        }
        return (text, false)
    }
}

/// A TCP socket connected to 127.0.0.1:`port`, with `timeout` seconds for each send and receive
/// and a receive buffer of `receiveBuffer` bytes when given; nil when it cannot connect. The
/// caller closes it.
func connectLoopback(port: Int, timeout: Double? = nil, receiveBuffer: Int32? = nil) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    if var size = receiveBuffer {
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
    if let timeout {
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 else {
        close(fd)
        return nil
    }
    return fd
}
