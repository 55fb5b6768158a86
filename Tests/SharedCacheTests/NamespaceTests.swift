import Foundation
import PipelineHost
import TestSupport
import Testing

/// Redis and two serve nodes on hosts of their own: network namespaces, joined by veth links.
/// Each node has two links, one to the host (where the test's client and the origin are) and one
/// to a switch that Redis is on, so a node can be cut off from Redis alone.
@Suite(
    .serialized, .needs(.pixels, .network, .redis, .process), .hangLimit,
    .enabled(if: NetworkLab.unavailable == nil, Comment(rawValue: NetworkLab.unavailable ?? "")))
struct NamespaceTests {
    @Test func nodesOnTheirOwnHostsShareOneTransferAndANodeCutOffFromRedisKeepsAnswering() async throws {
        let lab = NetworkLab()
        defer { lab.tearDown() }
        let redisAddress = lab.address(0, 2), originAddress = lab.address(9, 1)
        // iproute2 runs as processes: on a thread of their own, not on the test pool's.
        let (redisHost, hostA, hostB, cable) = try await onOwnThread { () throws -> (String, String, String, String) in
            let redisHost = try lab.namespace("r"), hostA = try lab.namespace("a"), hostB = try lab.namespace("b")
            let redisNet = try lab.bridge("s")
            try lab.link(redisHost, "r0", address: redisAddress, bridge: redisNet)
            let cable = try lab.link(hostA, "ar", address: lab.address(0, 3), bridge: redisNet)
            try lab.link(hostB, "br", address: lab.address(0, 4), bridge: redisNet)
            try lab.link(hostA, "af", address: lab.address(1, 2), hostAddress: lab.address(1, 1))
            try lab.link(hostB, "bf", address: lab.address(2, 2), hostAddress: lab.address(2, 1))
            // The origin is on an address of the host's own, which each node reaches over its front link.
            try lab.hostAddress(originAddress, on: redisNet)
            try lab.route(in: hostA, to: originAddress, via: lab.address(1, 1))
            try lab.route(in: hostB, to: originAddress, via: lab.address(2, 1))
            return (redisHost, hostA, hostB, cable)
        }
        let origin = try LoopbackServer(host: originAddress)
        origin.route("/far.jpg", .delayed(seconds: 0.5, .ok(Fixtures.quadrants(width: 640, height: 400))))
        for id in 0..<40 { origin.route("/p\(id).jpg", .ok(Fixtures.quadrants(width: 160, height: 100))) }

        // Redis as on a host of its own: its address, no loopback.
        try await onOwnThread {
            try lab.start(
                in: redisHost, "/usr/bin/redis-server",
                [
                    "--bind", redisAddress, "--port", "6379", "--protected-mode", "no",
                    "--save", "", "--appendonly", "no",
                ])
        }
        #expect(
            await eventually {
                if (try? await lab.run(in: hostA, "/usr/bin/redis-cli", ["-h", redisAddress, "PING"]))?.contains("PONG")
                    == true
                {
                    return true
                }
                try? await Task.sleep(for: .milliseconds(100))  // two processes per look: not every 5 ms
                return false
            })
        let directory = try TemporaryDirectory()
        let profile = try SharedTierTests.serveProfile(in: directory)
        var nodes: [ServeProcess] = []
        for (index, (host, address)) in [(hostA, lab.address(1, 2)), (hostB, lab.address(2, 2))].enumerated() {
            nodes.append(
                try await ServeProcess(
                    profileFile: profile,
                    [
                        "--host", address, "--allow-unsigned", "--no-access-log", "--shared-cache",
                        "redis://\(redisAddress):6379",
                        "--shared-lease", "60", "--shared-wait", "90", "--request-timeout", "300", "--cache-dir",
                        directory.file("node\(index)"),
                    ] + RedisServer.sharedTimeoutFlag, namespace: host))
        }
        func get(_ node: ServeProcess, _ path: String) async throws -> Int {
            try await Curl.get(node.baseURL + "/unsafe/thumb/" + base64url(origin.url(path))).status
        }

        // 1. One flight across the hosts: 20 requests, each with a fresh salt, make one transfer.
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<20 {
                let node = nodes[index % 2]
                group.addTask { try await get(node, "/far.jpg?u=ann&t=t\(index)&s=s\(index)") }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 20))
        #expect(origin.requestCount("/far.jpg") == 1)

        // 2. Node A's cable to Redis pulled: it keeps answering, from its own tiers and the origin.
        try await onOwnThread { try lab.setLink(hostA, cable, up: false) }
        var answered: [Int] = []
        for id in 0..<10 { answered.append(try await get(nodes[0], "/p\(id).jpg")) }
        answered.append(try await get(nodes[0], "/far.jpg"))
        #expect(answered == Array(repeating: 200, count: 11))
        #expect(origin.requestCount("/far.jpg") == 1, "its own memory answered")
        let metrics = try await Curl.get(nodes[0].baseURL + "/metrics").text
        let errors = metrics.split(separator: "\n").first { $0.hasPrefix("pipelinehost_redis_errors_total ") }.flatMap {
            Int($0.split(separator: " ")[1])
        }
        #expect((errors ?? 0) > 0, "node A could not reach Redis: \(String(describing: errors))")

        // 3. The cable back: once node A's breaker lets a call through, what A makes B is served
        // from Redis with no transfer.
        try await onOwnThread { try lab.setLink(hostA, cable, up: true) }
        var next = 10
        #expect(
            await eventually {
                guard next < 40 else { return false }
                let path = "/p\(next).jpg"
                next += 1
                guard (try? await get(nodes[0], path)) == 200, (try? await get(nodes[1], path)) == 200 else {
                    return false
                }
                return origin.requestCount(path) == 1
            }, "sharing resumed")
        for node in nodes { _ = try await node.stop() }
    }
}
