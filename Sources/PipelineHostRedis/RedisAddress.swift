/// Where the shared tier's Redis listens: `redis://host:port[/db]`.
public struct RedisAddress: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int
    public let database: Int

    /// Parses `redis://host[:port][/db]` (port 6379 and database 0 by default); nil otherwise.
    /// Passwords are not supported: a URL with user information is refused, so none is ever
    /// logged.
    public init?(_ text: String) {
        guard text.hasPrefix("redis://") else { return nil }
        var rest = text.dropFirst("redis://".count)
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            guard path.isEmpty || Int(path) != nil, (Int(path) ?? 0) >= 0 else { return nil }
            database = Int(path) ?? 0
            rest = rest[..<slash]
        }
        guard !rest.contains("@"), !rest.isEmpty else { return nil }
        var host = rest, port = 6379
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            guard let number = Int(rest[rest.index(after: colon)...]), (1...65535).contains(number) else { return nil }
            port = number
            host = rest[..<colon]
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { return nil }
        self.host = String(host)
        self.port = port
        self.database = database
    }

    public var description: String { "redis://\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)" }
}
