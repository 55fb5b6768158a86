import Foundation
import Glibc

/// A Redis Cluster on loopback: `masters` redis-servers with cluster mode on and `replicas`
/// replicas each, joined by `redis-cli --cluster create` as an operator would, with the settings
/// docs/SCALING.md gives (a node timeout of 3 s, so a failover takes seconds but a busy machine's
/// late gossip does not start one; full coverage not required, so a shard down does not stop
/// the others). Stopped by `stopNow()` or when released.
public final class RedisCluster: Sendable {
    public let nodes: [RedisServer]
    private let directory: TemporaryDirectory

    /// With `password`, every node asks for it (`requirepass`), and replicas give it to their
    /// masters (`masterauth`).
    public init(masters: Int = 3, replicas: Int = 1, password: String? = nil) async throws {
        directory = try TemporaryDirectory()
        var nodes: [RedisServer] = []
        for index in 0..<(masters * (1 + replicas)) {
            // Its cluster bus port, which must differ from its own.
            let port = try RedisServer.freePort()
            var bus = try RedisServer.freePort()
            while bus == port { bus = try RedisServer.freePort() }
            nodes.append(
                try await RedisServer(
                    port: port, password: password,
                    options: [
                        "--cluster-enabled", "yes", "--cluster-config-file", directory.file("nodes-\(index).conf"),
                        "--cluster-port", String(bus), "--cluster-node-timeout", "3000",
                        "--cluster-require-full-coverage", "no", "--dir", directory.path,
                        // A replica's first sync starts at once, not after Redis 7's 5 s wait for more replicas.
                        "--repl-diskless-sync-delay", "0",
                    ]))
        }
        self.nodes = nodes
        // A node that failed to start, or a create that failed, leaves no server behind.
        var started = false
        defer { if !started { for node in nodes { node.stopNow() } } }
        let created = try await nodes[0].cli(
            ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" }
                + ["--cluster-replicas", String(replicas), "--cluster-yes"])
        guard created.contains("All 16384 slots covered") else {
            throw ServerError("redis-cli --cluster create failed: \(created)")
        }
        guard try await waitUntilServing(replicas: masters * replicas) else {
            throw ServerError("the cluster did not come up")
        }
        started = true
    }

    /// `redis+cluster://` with two of the nodes as seeds.
    public var url: String {
        "redis+cluster://" + nodes.prefix(2).map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
    }

    /// The nodes that are masters now (a failover changes them).
    public func masters() async throws -> [RedisServer] {
        var masters: [RedisServer] = []
        for node in nodes where node.isRunning {
            if (try? await node.command("ROLE"))?.elements.first == .text("master") { masters.append(node) }
        }
        return masters
    }

    /// Waits (an event: polled, with a generous bound) until every running node says the
    /// cluster is ok, every slot is served by a running master, and `replicas` replicas have a
    /// live link to their master.
    public func waitUntilServing(replicas: Int, within seconds: Double = 60) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if await isServing(replicas: replicas) { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    private func isServing(replicas: Int) async -> Bool {
        var linked = 0
        for node in nodes where node.isRunning {
            guard let info = try? await node.command("CLUSTER", "INFO"), info.text.contains("cluster_state:ok") else {
                return false
            }
            let replication = (try? await node.command("INFO", "replication"))?.text ?? ""
            if replication.contains("role:slave"), replication.contains("master_link_status:up") { linked += 1 }
        }
        guard let asked = nodes.first(where: \.isRunning), let slots = try? await asked.command("CLUSTER", "SLOTS")
        else { return false }
        // [[start, end, [host, port, id], replicas...], ...]: every range's master must run.
        let running = Set(nodes.filter(\.isRunning).map(\.port))
        let servedBy = slots.elements.compactMap { range -> Int? in
            range.elements.count > 2 ? Int(range.elements[2].elements.dropFirst().first?.text ?? "") : nil
        }
        return linked >= replicas && !servedBy.isEmpty && servedBy.allSatisfy(running.contains)
    }

    /// The keys a node holds (matching `pattern`), by SCAN.
    public func keys(on node: RedisServer, matching pattern: String = "*") async throws -> [String] {
        var keys: [String] = [], cursor = "0"
        repeat {
            let page = try await node.command("SCAN", cursor, "MATCH", pattern, "COUNT", "1000").elements
            guard page.count == 2 else { throw ServerError("SCAN answered \(page)") }
            cursor = page[0].text
            keys += page[1].elements.map(\.text)
        } while cursor != "0"
        return keys
    }

    /// Kills every node at once, for a `defer`.
    public func stopNow() {
        for node in nodes { node.stopNow() }
    }

    deinit { stopNow() }
}
