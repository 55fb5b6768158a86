import Foundation
import PipelineHost

/// `pipelinehost serve` running as a subprocess on a free loopback port, and curl as its client:
/// the service as a user runs and calls it.
public final class ServeProcess: Sendable {
    public let running: CLIProcess.Running
    public let port: Int
    /// The address it listens on (`--host`; 127.0.0.1 by default).
    public let host: String

    /// Starts serve on `profileFile` with `arguments` added (`--port 0` is added) and waits for
    /// its start-up line. With `namespace`, it runs in that network namespace (`ip netns exec`);
    /// with `memoryGroup`, in that memory cgroup. Unless `arguments` set `--request-timeout`, it is `ServeTestTimeouts.requestSeconds`.
    public init(
        profileFile: String, _ arguments: [String] = [], environment: [String: String] = [:],
        namespace: String? = nil, memoryGroup: MemoryGroup? = nil
    ) async throws {
        let timeout =
            arguments.contains("--request-timeout") ? [] : ["--request-timeout", "\(ServeTestTimeouts.requestSeconds)"]
        let serve = ["serve", profileFile, "--port", "0"] + timeout + arguments
        if let namespace {
            running = try CLIProcess.start(
                ["netns", "exec", namespace, CLIProcess.executable] + serve,
                environment: environment, executable: "/usr/sbin/ip")
        } else if let memoryGroup {
            let launch = memoryGroup.launching([CLIProcess.executable] + serve)
            running = try CLIProcess.start(launch.arguments, environment: environment, executable: launch.executable)
        } else {
            running = try CLIProcess.start(serve, environment: environment)
        }
        let started = running
        var found: (host: String, port: Int)?
        _ = await eventually {
            found = Self.address(in: started.outputSoFar)
            return found != nil || !started.isRunning
        }
        guard let found else {
            let outcome = try await running.finished(timeout: 5)
            throw ServerError("serve did not start: \(outcome.output)")
        }
        (host, port) = found
    }

    /// A test that failed before `stop()` leaves no serve behind.
    deinit {
        if running.isRunning { running.send(SIGKILL) }
    }

    public var baseURL: String { "http://\(host):\(port)" }

    /// A client that asks for `path` and leaves when the test says (`close()`): its leaving is
    /// an event the test chooses, not a time limit that a slow machine may outrun.
    public func request(_ path: String) throws -> RawConnection {
        let connection = try RawConnection(port: port)
        connection.send("GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\n\r\n")
        return connection
    }

    /// Waits until the gauge `pipelinehost_waiting_requests` reads `count`: that many requests
    /// are in the pipeline, each waiting for its final step (joined work counts once per request).
    public func waitUntilWaiting(_ count: Int) async -> Bool {
        await eventually {
            let metrics = (try? await Curl.get(baseURL + "/metrics").text) ?? ""
            return metrics.contains("pipelinehost_waiting_requests \(count).0\n")
                || metrics.contains("pipelinehost_waiting_requests \(count)\n")
        }
    }

    /// The value of the unlabelled metric `name` in `/metrics` now ("name 12" or "name 12.0");
    /// nil when it is not there or the service does not answer.
    public func metric(_ name: String) async -> Double? {
        let text = (try? await Curl.get(baseURL + "/metrics").text) ?? ""
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap {
            Double($0.split(separator: " ")[1])
        }
    }

    /// Sends SIGTERM and waits for the exit.
    public func stop() async throws -> CLIProcess.Outcome {
        running.send(SIGTERM)
        return try await running.finished(timeout: 30)
    }

    private static func address(in output: String) -> (host: String, port: Int)? {
        guard let range = output.range(of: "listening on http://") else { return nil }
        let rest = output[range.upperBound...].prefix { !$0.isWhitespace }
        guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]) else { return nil }
        return (String(rest[..<colon]), port)
    }
}

/// One HTTP answer, as curl saw it.
public struct HTTPAnswer: Sendable {
    public let status: Int
    public let headers: [String: String]
    public let body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// curl, run off the cooperative pool.
public enum Curl {
    /// One request; headers are "Name: value". A status of 0 means no answer (timeout, refused).
    public static func get(
        _ url: String, method: String = "GET", headers: [String] = [], body: String? = nil,
        maxTime: Double = 60, extra: [String] = []
    ) async throws -> HTTPAnswer {
        let directory = NSTemporaryDirectory() + "curl-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var arguments = [
            "-s", "-o", directory + "/body", "-D", directory + "/head", "-X", method, "-m", String(maxTime),
        ]
        if method == "HEAD" { arguments = ["-s", "-I", "-o", directory + "/head", "-m", String(maxTime)] }
        for header in headers { arguments += ["-H", header] }
        if let body { arguments += ["--data-binary", body] }
        _ = try await run(arguments + extra + [url])
        let head = (try? String(contentsOfFile: directory + "/head", encoding: .utf8)) ?? ""
        var status = 0, fields: [String: String] = [:]
        for line in head.split(separator: "\r\n") {
            if line.hasPrefix("HTTP/") {
                status = Int(line.split(separator: " ")[1]) ?? 0
            } else if let colon = line.firstIndex(of: ":") {
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
        }
        let bytes = FileManager.default.contents(atPath: directory + "/body").map { [UInt8]($0) } ?? []
        return HTTPAnswer(status: status, headers: fields, body: bytes)
    }

    /// `count` requests for `url` at once (curl --parallel); returns each status.
    public static func parallel(_ url: String, count: Int, maxTime: Double = 60) async throws -> [Int] {
        let arguments =
            ["-s", "--parallel", "--parallel-immediate", "--parallel-max", String(count), "-m", String(maxTime)]
            + Array(repeating: ["-o", "/dev/null", "-w", "%{http_code}\\n", url], count: count).flatMap { $0 }
        return try await run(arguments).split(separator: "\n").compactMap { Int($0) }
    }

    /// Runs curl and returns its standard output.
    @discardableResult
    public static func run(_ arguments: [String]) async throws -> String {
        try await onOwnThread { try output(of: "/usr/bin/curl", arguments) }
    }
}

/// Runs blocking `work` on a thread of its own. A curl held by a test's gate can block for
/// seconds: on Dispatch's pool, a few of those starved the other suites' blocking work (which
/// the pool gives only as many threads as cores), so their `eventually` deadlines passed.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    let handoff = Locked<Result<T, any Error>?>(nil)
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        Thread {
            let result = Result { try work() }
            handoff.withLock { $0 = result }
            continuation.resume()
        }.start()
    }
    return try handoff.withLock { $0! }.get()
}

/// Runs a program to its end and returns its standard output (standard error is dropped).
public func output(of executable: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

/// base64url without padding, as serve's paths carry sources.
public func base64url(_ text: String) -> String {
    Data(text.utf8).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(
            of: "=", with: "")
}
