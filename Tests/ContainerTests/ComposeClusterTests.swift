import Foundation
import TestSupport
import Testing

/// deploy/compose.yaml as an operator brings it up with podman-compose: two nodes of the image
/// sharing one Redis, on a network of their own, reaching an origin on the host.
@Suite(
    .serialized, .needs(.pixels, .network, .process),
    .disabled(if: ContainerImage.unavailable != nil, Comment(rawValue: ContainerImage.unavailable ?? "")))
struct ComposeClusterTests {
    /// `down -v` removes the containers and their volumes; podman-compose 1.0.3 leaves the
    /// project's network, which goes here too.
    static func down(_ project: String, _ environment: [String: String]) {
        _ = try? SpawnedProcess.runBlocking(
            "/usr/bin/podman-compose", ["-f", Fixtures.path("deploy/compose.yaml"), "-p", project, "down", "-v"],
            environment: environment, timeout: 300)
        _ = try? SpawnedProcess.runBlocking(
            "/usr/bin/podman", ["network", "rm", "-f", project + "_default"], environment: environment, timeout: 60)
    }

    @Test("one request's transfer serves both nodes: the second answers from the shared Redis")
    func sharedTransfer() async throws {
        let image = try await ContainerImage.built()
        let redis = try await ContainerImage.redis()
        let directory = try TemporaryDirectory()
        // The origin is on the host, outside the compose network: private addresses allowed.
        let profile = try directory.write(
            "profiles.lua",
            Array(
                """
                profile "thumb" {
                  fetch      { block_private = false },
                  cache      { disk = true },
                  decode     {},
                  downsample { size = 64, fit = "cover" },
                  encode     { format = "jpeg" },
                  cache      { memory = true, disk = true },
                }
                """.utf8))
        let (portA, portB) = (try RedisServer.freePort(), try RedisServer.freePort())
        let project = "pipelinehost-test-" + UUID().uuidString.prefix(8).lowercased()
        let environment = ContainerImage.environment.merging([
            "PIPELINEHOST_IMAGE": image, "REDIS_IMAGE": redis, "PIPELINEHOST_PROFILES": profile,
            "PIPELINEHOST_ALLOW_UNSIGNED": "true", "NODE_A_PORT": "\(portA)", "NODE_B_PORT": "\(portB)",
        ]) { $1 }
        let compose = { (arguments: [String]) in
            try await SpawnedProcess.run(
                "/usr/bin/podman-compose", ["-f", Fixtures.path("deploy/compose.yaml"), "-p", project] + arguments,
                environment: environment, timeout: 300)
        }
        let up = try await compose(["up", "-d"])
        defer { Self.down(project, environment) }
        #expect(up.status == 0, "\(up.output)")

        // The nodes reach the host at host.containers.internal, the gateway of the project's network:
        // the origin listens there, not on every address.
        let gateway = try await ContainerImage.podman(
            ["network", "inspect", project + "_default", "--format", "{{range .Subnets}}{{.Gateway}}{{end}}"]
        ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let origin = try LoopbackServer(host: gateway)
        origin.route("/a.jpg", .ok(Fixtures.sample))
        let path = "/unsafe/thumb/" + base64url("http://host.containers.internal:\(origin.port)/a.jpg")

        for port in [portA, portB] {
            let up = await eventually { (try? await Curl.get("http://127.0.0.1:\(port)/health"))?.status == 200 }
            #expect(up, "node on \(port) did not answer /health")
        }
        let first = try await Curl.get("http://127.0.0.1:\(portA)\(path)")
        let second = try await Curl.get("http://127.0.0.1:\(portB)\(path)")
        #expect(first.status == 200 && second.status == 200, "\(first.text) \(second.text)")
        #expect(first.headers["x-cache"] == "miss")
        #expect(second.headers["x-cache"] == "shared", "node b found node a's variant in Redis")
        #expect(second.body == first.body)
        #expect(origin.requestCount("/a.jpg") == 1, "one transfer for both nodes")
        // mem_limit: 1g, seen from inside the node (podman-compose names it PROJECT_node-a_1).
        let logs = try await ContainerImage.podman(["logs", project + "_node-a_1"]).output
        #expect(logs.contains("memory budget 512.0 MB (half of cgroup v"), "\(logs)")
    }
}
