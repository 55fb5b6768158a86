import Foundation
import TestSupport
import Testing

/// The container image as an operator runs it: built from this tree by scripts/image, started
/// with podman on the host's network with a mounted profile, asked for a thumbnail from an origin
/// on the host, and stopped.
@Suite(
    .serialized, .needs(.pixels, .network, .process),
    .disabled(if: ContainerImage.unavailable != nil, Comment(rawValue: ContainerImage.unavailable ?? "")))
struct ContainerImageTests {
    let directory: TemporaryDirectory
    let profile: String

    init() throws {
        directory = try TemporaryDirectory()
        profile = try directory.write("profiles.lua", Array(Fixtures.cachedThumbProfile.utf8))
    }

    /// A container of the image serving `profile` unsigned on `port`, read-only but for its cache.
    func start(port: Int, _ options: [String] = []) async throws -> ContainerImage.Container {
        try await ContainerImage.Container(
            image: ContainerImage.built(),
            options: [
                "--read-only", "-v", "\(profile):/etc/pipelinehost/profiles.lua:ro",
                "-e", "PIPELINEHOST_PORT=\(port)", "-e", "PIPELINEHOST_ALLOW_UNSIGNED=true",
            ] + options)
    }

    /// Waits for the start-up line; nil if the container stopped first.
    func listening(_ container: ContainerImage.Container) async throws -> Bool {
        _ = await eventually {
            let logs = (try? await container.logs()) ?? ""
            let running = (try? await container.inspect("{{.State.Running}}")) == "true"
            return logs.contains("pipelinehost serve: listening on") || !running
        }
        return try await container.logs().contains("pipelinehost serve: listening on")
    }

    @Test("scripts/image builds it, names it on its last line, with the binary and no toolchain")
    func built() async throws {
        let image = try await ContainerImage.built()
        #expect(image == "localhost/pipelinehost:latest")
        let config = try await ContainerImage.podman(["image", "inspect", image, "--format", "{{json .Config}}"])
        #expect(config.stdout.contains(#""User":"10001:10001""#), "\(config.stdout)")
        #expect(config.stdout.contains(#""Entrypoint":["pipelinehost"]"#), "\(config.stdout)")
        let health = try await ContainerImage.podman(["image", "inspect", image, "--format", "{{json .HealthCheck}}"])
        #expect(health.stdout.contains("/health"), "a HEALTHCHECK on /health: \(health.stdout)")
        let tools = try await ContainerImage.podman(
            ["run", "--rm", "--entrypoint", "sh", image, "-c", "command -v swift cc gcc clang; pipelinehost --version"])
        let version = try await CLIProcess.run(["--version"]).stdout
        #expect(tools.stdout == version, "only the binary, the one built here: \(tools.output)")
    }

    @Test("serves a thumbnail from the host's origin, /health and /metrics, as a user that is not root")
    func serves() async throws {
        let origin = try LoopbackServer()
        origin.route("/a.jpg", .ok(Fixtures.sample))
        let port = try RedisServer.freePort()
        let container = try await start(port: port)
        let started = try await listening(container)
        let logs = try await container.logs()
        #expect(started, "\(logs)")
        let base = "http://127.0.0.1:\(port)"
        let thumbnail = try await Curl.get(base + "/unsafe/thumb/" + base64url(origin.url("/a.jpg")))
        #expect(thumbnail.status == 200, "\(thumbnail.text)")
        let pixels = try #require(Fixtures.decoded(thumbnail.body))
        #expect(pixels.width == 64 && pixels.height == 64)
        #expect(try await Curl.get(base + "/health").status == 200)
        let metrics = try await Curl.get(base + "/metrics").text
        #expect(metrics.contains("pipelinehost_decodes_total 1"), "\(metrics)")
        #expect(try await container.exec(["id", "-u"]).stdout == "10001\n")
        let health = try await ContainerImage.podman(["healthcheck", "run", container.name])
        #expect(health.status == 0, "the image's HEALTHCHECK: \(health.output)")
        try await container.remove()
    }

    @Test("the memory budget is half the container's limit and the cores its CPU quota, from its own cgroup")
    func sizedByLimits() async throws {
        let container = try await start(port: try RedisServer.freePort(), ["--memory", "1g", "--cpus", "1"])
        #expect(try await listening(container))
        let logs = try await container.logs()
        #expect(logs.contains("memory budget 512.0 MB (half of cgroup v"), "\(logs)")
        #expect(logs.contains("; 1 core (cgroup v"), "\(logs)")
        try await container.remove()
    }

    @Test("podman stop drains and exits 0, before its grace period runs out")
    func stops() async throws {
        let container = try await start(port: try RedisServer.freePort(), ["-e", "PIPELINEHOST_DRAIN_TIMEOUT=5"])
        #expect(try await listening(container))
        // A grace period of 60 s: a process that ignored SIGTERM would be killed at its end, with 137.
        let stop = try await ContainerImage.podman(["stop", "-t", "60", container.name])
        #expect(stop.status == 0, "\(stop.output)")
        #expect(try await container.inspect("{{.State.ExitCode}}") == "0")
        #expect(try await container.logs().contains("draining"))
        try await container.remove()
    }
}
