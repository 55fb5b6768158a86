import Foundation
import PipelineHost

/// The container image as an operator gets it: built by `scripts/image` from this tree, run and
/// stopped with podman. The image is built once per test process.
public enum ContainerImage {
    /// podman's settings for this machine (deploy/containers.conf), unless the environment names
    /// its own.
    public static var environment: [String: String] {
        ProcessInfo.processInfo.environment["CONTAINERS_CONF"] == nil
            ? ["CONTAINERS_CONF": Fixtures.path("deploy/containers.conf")] : [:]
    }

    /// Why podman cannot run containers here, or nil when it can: a container that prints a word
    /// is the test. Suites skip with this message, and run everywhere else.
    public static let unavailable: String? = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/podman") else {
            return "podman is not installed (scripts/setup test installs it)"
        }
        let info = try? SpawnedProcess.runBlocking("/usr/bin/podman", ["info"], environment: environment, timeout: 60)
        guard let info, info.status == 0 else {
            return "podman cannot run here: `podman info` failed: \(info?.output ?? "no answer")"
        }
        return nil
    }()

    private static let build = Locked<Task<String, any Error>?>(nil)

    /// The image's name, after `scripts/image` has built it (with PIPELINEHOST_BIN as its binary,
    /// the release build scripts/test made). Its output is in the error when it fails.
    public static func built() async throws -> String {
        let task = build.withLock { task in
            if let task { return task }
            let made = Task {
                let outcome = try await SpawnedProcess.run(
                    Fixtures.path("scripts/image"), [], environment: environment, timeout: 1200)
                guard outcome.status == 0, let name = outcome.stdout.split(separator: "\n").last else {
                    throw ServerError("scripts/image failed (\(outcome.status)): \(outcome.output)")
                }
                return String(name)
            }
            task = made
            return made
        }
        return try await task.value
    }

    private static let redisBuild = Locked<Task<String, any Error>?>(nil)

    /// A Redis image made from the same base, for the Compose test: no registry is reachable here,
    /// so `docker.io/library/redis` cannot be pulled. The Compose file runs it as it would run that.
    public static func redis() async throws -> String {
        _ = try await built()  // the base exists
        let task = redisBuild.withLock { task in
            if let task { return task }
            let made = Task {
                let context = try TemporaryDirectory()
                try context.write(
                    "Containerfile",
                    Array(
                        """
                        FROM localhost/pipelinehost-base:bookworm
                        RUN apt-get update \\
                         && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \\
                         && apt-get clean && rm -rf /var/lib/apt/lists/*
                        USER redis
                        """.utf8))
                let name = "localhost/pipelinehost-test-redis:latest"
                let outcome = try await podman(
                    ["build", "--quiet", "--network", "host", "-t", name, context.path], timeout: 600)
                guard outcome.status == 0 else { throw ServerError("building \(name) failed: \(outcome.output)") }
                return name
            }
            task = made
            return made
        }
        return try await task.value
    }

    /// Runs `podman` with `arguments` and returns what it printed (through SpawnedProcess: `run
    /// -d` leaves conmon running).
    @discardableResult
    public static func podman(_ arguments: [String], timeout: Double = 120) async throws -> CLIProcess.Outcome {
        try await SpawnedProcess.run("/usr/bin/podman", arguments, environment: environment, timeout: timeout)
    }

    /// A container of the image, started detached on the host's network; removed by `remove()`
    /// or, if a test fails first, when it goes away.
    public final class Container: Sendable {
        public let name: String

        /// Starts the image with `options` (podman run's) and `command` after the image name.
        public init(image: String, options: [String], command: [String] = []) async throws {
            name = "pipelinehost-test-" + UUID().uuidString.prefix(8).lowercased()
            let run = try await ContainerImage.podman(
                ["run", "-d", "--name", name, "--network", "host"] + options + [image] + command)
            guard run.status == 0 else { throw ServerError("podman run failed: \(run.output)") }
        }

        /// `podman exec` in the container.
        public func exec(_ command: [String]) async throws -> CLIProcess.Outcome {
            try await ContainerImage.podman(["exec", name] + command)
        }

        /// What the container wrote so far.
        public func logs() async throws -> String { try await ContainerImage.podman(["logs", name]).output }

        /// `podman inspect --format` of the container.
        public func inspect(_ format: String) async throws -> String {
            try await ContainerImage.podman(["inspect", name, "--format", format]).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Removes it and its anonymous volumes (the cache), stopping it first if it runs.
        public func remove() async throws { try await ContainerImage.podman(["rm", "-f", "-v", "-t", "0", name]) }

        deinit {
            _ = try? SpawnedProcess.runBlocking(
                "/usr/bin/podman", ["rm", "-f", "-v", "-t", "0", name], environment: ContainerImage.environment,
                timeout: 60)
        }
    }
}
