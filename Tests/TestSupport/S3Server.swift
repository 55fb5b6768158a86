import Foundation
import Glibc
import PipelineHost

/// moto's S3 server (PyPI `moto[server]`, in the venv scripts/setup test makes) on a free loopback
/// port, with authentication on: an IAM user made through its IAM API signs every request, so
/// a wrong secret gets `SignatureDoesNotMatch` as from S3 itself. Stopped by `stop()`.
public final class S3Server: Sendable {
    public let port: Int
    public let accessKeyID: String
    public let secretAccessKey: String
    private let process: Locked<Process?>

    static var venv: String { Fixtures.path(".build/reference-venv/bin") }
    static var tool: String { Fixtures.path("Tests/TestSupport/s3tool.py") }

    public init() async throws {
        let port = try RedisServer.freePort()
        self.port = port
        let server = Process()
        server.executableURL = URL(fileURLWithPath: Self.venv + "/moto_server")
        server.arguments = ["-H", "127.0.0.1", "-p", String(port)]
        server.environment = ProcessInfo.processInfo.environment.merging(["INITIAL_NO_AUTH_ACTION_COUNT": "3"]) { $1 }
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        process = Locked(server)
        let up = await eventually {
            guard server.isRunning else { return true }
            return Self.accepts(port: port)
        }
        guard up, server.isRunning else {
            server.terminate()
            throw ServerError("moto_server did not start on port \(port) (scripts/setup test installs it)")
        }
        let words = try await Self.tool(port, ["setup"]).split(separator: " ").map(String.init)
        guard words.count == 2 else {
            server.terminate()
            throw ServerError("moto IAM setup failed: \(words)")
        }
        (accessKeyID, secretAccessKey) = (words[0], words[1])
    }

    public var endpoint: String { "http://127.0.0.1:\(port)" }

    /// The AWS environment a pipelinehost process reaches this server with.
    public var environment: [String: String] {
        [
            "AWS_ACCESS_KEY_ID": accessKeyID, "AWS_SECRET_ACCESS_KEY": secretAccessKey,
            "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": "us-east-1",
        ]
    }

    /// A role's session credentials (key, secret, token), as `AWS_SESSION_TOKEN` users have.
    public func sessionCredentials() async throws -> (key: String, secret: String, token: String) {
        let words = try await Self.tool(port, ["session", accessKeyID, secretAccessKey]).split(separator: " ")
        guard words.count == 3 else { throw ServerError("no session credentials: \(words)") }
        return (String(words[0]), String(words[1]), String(words[2]))
    }

    public func makeBucket(_ bucket: String) async throws {
        _ = try await Self.tool(port, ["mkbucket", accessKeyID, secretAccessKey, bucket])
    }

    /// Uploads the file at `path` as `key`.
    public func put(_ bucket: String, _ key: String, file path: String) async throws {
        _ = try await Self.tool(port, ["put", accessKeyID, secretAccessKey, bucket, key, path])
    }

    /// The keys under `prefix`.
    public func keys(_ bucket: String, prefix: String = "") async throws -> [String] {
        try await Self.tool(port, ["list", accessKeyID, secretAccessKey, bucket, prefix]).split(separator: "\n")
            .map(String.init)
    }

    /// Kills the server, as a crash would.
    public func stop() {
        if let server = process.withLock({ state -> Process? in
            defer { state = nil }
            return state
        }) {
            kill(server.processIdentifier, SIGKILL)
        }
    }

    deinit { stop() }

    private static func tool(_ port: Int, _ arguments: [String]) async throws -> String {
        let (python, script) = (venv + "/python", tool)
        let (status, printed, errors) = try await onOwnThread { () -> (Int32, String, String) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: python)
            process.arguments = [script, "http://127.0.0.1:\(port)"] + arguments
            let (out, err) = (Pipe(), Pipe())
            process.standardOutput = out
            process.standardError = err
            try process.run()
            // Read both before waiting, so neither pipe can fill and stall the tool.
            let errorData = Locked(Data())
            let reader = Thread { errorData.withLock { $0 = err.fileHandleForReading.readDataToEndOfFile() } }
            reader.start()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            while reader.isExecuting || !reader.isFinished { Thread.sleep(forTimeInterval: 0.01) }
            return (
                process.terminationStatus, String(decoding: data, as: UTF8.self),
                String(decoding: errorData.withLock { $0 }, as: UTF8.self)
            )
        }
        guard status == 0 else {
            throw ServerError("s3tool.py \(arguments.first ?? "") failed (\(status)): \(errors.suffix(600))")
        }
        return printed.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether something accepts connections on the loopback port.
    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
