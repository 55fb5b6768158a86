import Foundation
import Glibc
import PipelineHost

/// A private redis-server on a free loopback port, with no persistence and LRU eviction as the
/// docs tell users to run it; stopped (and its port freed) by `stop()`. Everything that waits
/// (for the server, for redis-cli) waits on a thread of its own, never on a cooperative one.
public final class RedisServer: Sendable {
    public let port: Int
    /// The default user's password (`--requirepass`), as a managed Redis asks for one; nil for none.
    public let password: String?
    private let process: Locked<Process?>
    /// More of redis-server's options (a cluster node's).
    private let options: [String]

    /// What a test's Redis client, or a node a test starts (`sharedTimeoutFlag`), gives each call:
    /// 5 s, where a server's default is 50 ms. Every suite runs at once, and a call that timed out
    /// makes a node (rightly) compute alone, which is not what these tests check: with 2 s, a busy
    /// run's node fetched for itself instead of waiting (2026-11-30). It stays within what serve's
    /// default --request-timeout (30 s) allows: two calls and --shared-wait's 15 s.
    public static let callTimeout: Duration = .seconds(5)
    /// `callTimeout` as the command line's flag.
    public static let sharedTimeoutFlag = ["--shared-timeout", "\(callTimeout.components.seconds * 1000)"]

    /// Starts redis-server (Debian's package; scripts/setup test installs it) on `port`, or a free one.
    public init(port: Int? = nil, maxMemory: String = "64mb", password: String? = nil, options: [String] = [])
        async throws
    {
        self.port = try port ?? Self.freePort()
        self.password = password
        self.options = options
        process = Locked(nil)
        try await start(maxMemory: maxMemory)
    }

    /// Adds an ACL user with `password` and every right, as a managed Redis's users have.
    public func addUser(_ name: String, password: String) async throws {
        let answer = try await cli(["ACL", "SETUSER", name, "on", ">" + password, "~*", "&*", "+@all"])
        guard answer.contains("OK") else { throw ServerError("ACL SETUSER failed: \(answer)") }
    }

    public var url: String { "redis://127.0.0.1:\(port)" }

    /// Whether the server runs (not stopped, and not exited).
    public var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    /// Starts the server again after `stop()`, on the same port.
    public func start(maxMemory: String = "64mb") async throws {
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/redis-server")
        server.arguments =
            [
                "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--maxmemory", maxMemory, "--maxmemory-policy", "allkeys-lru", "--daemonize", "no",
            ]
            + (password.map { ["--requirepass", $0, "--masterauth", $0] } ?? []) + options
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        process.withLock { $0 = server }
        // Ready once it answers PING.
        let port = port, password = password
        let ready = try await onOwnThread { () -> Bool in
            for _ in 0..<500 {
                // It exited (its port taken meanwhile, say): PING would only reach whoever has the port.
                guard server.isRunning else { return false }
                if RedisCommand.send(["PING"], port: port, password: password, timeout: 1) == .text("PONG") {
                    return true
                }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return false
        }
        guard ready else { throw ServerError("redis-server did not start on port \(port)") }
    }

    /// Kills the server (SIGKILL, as a crash would) and waits until it is gone.
    public func stop() async {
        guard
            let server = process.withLock({ state -> Process? in
                defer { state = nil }
                return state
            })
        else { return }
        kill(server.processIdentifier, SIGKILL)
        _ = try? await onOwnThread { server.waitUntilExit() }
    }

    /// Kills the server at once without waiting, for a `defer` (which cannot await): a task
    /// started there may never run before the test process exits, leaving the server behind.
    public func stopNow() {
        if let server = process.withLock({ state -> Process? in
            defer { state = nil }
            return state
        }) {
            kill(server.processIdentifier, SIGKILL)
        }
    }

    deinit {
        if let server = process.withLock({ $0 }) { kill(server.processIdentifier, SIGKILL) }
    }

    /// Sends one command over a socket (no redis-cli process) and returns the reply; throws when
    /// the server cannot be reached.
    public func command(_ words: String...) async throws -> RedisValue {
        let port = port, password = password
        guard let reply = try await onOwnThread({ RedisCommand.send(words, port: port, password: password) }) else {
            throw ServerError("no answer from redis-server on port \(port) to \(words.first ?? "")")
        }
        return reply
    }

    /// Runs redis-cli against the server and returns what it printed.
    public func cli(_ arguments: [String]) async throws -> String {
        let port = port, auth = authArguments
        return try await onOwnThread { try output(of: "/usr/bin/redis-cli", ["-p", String(port)] + auth + arguments) }
    }

    /// redis-cli's password arguments, when the server has one.
    private var authArguments: [String] { password.map { ["-a", $0, "--no-auth-warning"] } ?? [] }

    /// Every key and value the server holds, as text (values decoded leniently).
    public func dump() async throws -> [(key: String, value: String)] {
        var stored: [(key: String, value: String)] = []
        for key in try await cli(["--scan"]).split(separator: "\n").map(String.init) {
            stored.append((key, try await cli(["--no-raw", "GET", key])))
        }
        return stored
    }

    /// A port nothing listens on now.
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr in
                bind(fd, sockaddr, length) == 0 && getsockname(fd, sockaddr, &length) == 0
            }
        }
        guard bound else { throw ServerError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
