import Foundation
import PipelineHost

/// A TCP port that takes connections into its backlog and never reads or answers them.
public final class HungListener: Sendable {
    let fd: Int32
    public let port: Int
    private let open = Locked(true)

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            throw ServerError("cannot listen on 127.0.0.1")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// Stops listening: connections in the backlog are reset.
    public func close() {
        guard
            open.withLock({ was in
                defer { was = false }; return was
            })
        else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}
