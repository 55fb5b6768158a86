/// Where the shared tier's Redis listens, and as whom: `redis://[user@]host:port[/db]`, or a
/// Redis Cluster's seeds, `redis+cluster://[user@]host:port[,host:port...]` (the client learns
/// the rest of the cluster from them). The password is not part of what this prints: it comes
/// from `PIPELINEHOST_REDIS_PASSWORD` (see `withPassword`), or from the URL
/// (`redis://user:password@host`), which a caller should warn about, since a command line is
/// visible to every user of the machine.
public struct RedisAddress: Sendable, Equatable, CustomStringConvertible {
    /// The node (for a cluster, the first seed).
    public private(set) var host: String
    public private(set) var port: Int
    public let database: Int
    /// The ACL user, when one is given; nil is Redis' default user.
    public let user: String?
    /// The password AUTH sends; nil sends no AUTH.
    public private(set) var password: String?
    /// Whether the password was written in the URL itself.
    public let passwordInURL: Bool
    /// A cluster's seed nodes; empty for one Redis.
    public private(set) var clusterSeeds: [RedisNode]

    public var isCluster: Bool { !clusterSeeds.isEmpty }
    public var node: RedisNode { RedisNode(host: host, port: port) }

    /// Parses `redis://[user[:password]@]host[:port][/db]` (port 6379 and database 0 by
    /// default; user and password percent-decoded), or `redis+cluster://` with one or more
    /// comma-separated nodes and no database (a cluster has only 0); nil otherwise.
    public init?(_ text: String) {
        let cluster = text.hasPrefix("redis+cluster://")
        guard cluster || text.hasPrefix("redis://") else { return nil }
        var rest = text.dropFirst(cluster ? "redis+cluster://".count : "redis://".count)
        var database = 0
        var user: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            let information = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = information.firstIndex(of: ":")
            guard let name = (colon.map { information[..<$0] } ?? information).percentDecoded else { return nil }
            user = name.isEmpty ? nil : name
            if let colon {
                guard let secret = information[information.index(after: colon)...].percentDecoded, !secret.isEmpty
                else { return nil }
                password = secret
            }
        }
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            guard path.isEmpty || Int(path) != nil, (Int(path) ?? 0) >= 0, !cluster || (Int(path) ?? 0) == 0 else {
                return nil
            }
            database = Int(path) ?? 0
            rest = rest[..<slash]
        }
        let nodes = rest.split(separator: ",", omittingEmptySubsequences: false).map { RedisNode($0) }
        guard nodes.allSatisfy({ $0 != nil }), cluster || nodes.count == 1, let first = nodes.first ?? nil else {
            return nil
        }
        host = first.host
        port = first.port
        self.database = database
        self.user = user
        self.password = password
        passwordInURL = password != nil
        clusterSeeds = cluster ? nodes.compactMap { $0 } : []
    }

    /// The address with `password` for AUTH, unless the URL carried one.
    public func withPassword(_ password: String?) -> RedisAddress {
        var address = self
        if address.password == nil, let password, !password.isEmpty { address.password = password }
        return address
    }

    /// One node of a cluster, as an address of its own (so it prints as that node), with the
    /// same user and password.
    public func at(_ node: RedisNode) -> RedisAddress {
        var address = self
        address.host = node.host
        address.port = node.port
        address.clusterSeeds = []
        return address
    }

    /// `redis://user@host:port/db` or `redis+cluster://user@host:port,...`: never the password.
    public var description: String {
        let who = user.map { $0 + "@" } ?? ""
        guard !isCluster else {
            return "redis+cluster://\(who)\(clusterSeeds.map(\.description).joined(separator: ","))"
        }
        return "redis://\(who)\(node)/\(database)"
    }
}
