/// Where the shared tier's Redis listens, and as whom: `redis://[user@]host:port[/db]`. The
/// password is not part of what this prints: it comes from `PIPELINEHOST_REDIS_PASSWORD` (see
/// `withPassword`), or from the URL (`redis://user:password@host`), which a caller should warn
/// about, since a command line is visible to every user of the machine.
public struct RedisAddress: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int
    public let database: Int
    /// The ACL user, when one is given; nil is Redis' default user.
    public let user: String?
    /// The password AUTH sends; nil sends no AUTH.
    public private(set) var password: String?
    /// Whether the password was written in the URL itself.
    public let passwordInURL: Bool

    /// Parses `redis://[user[:password]@]host[:port][/db]` (port 6379 and database 0 by
    /// default; user and password percent-decoded); nil otherwise.
    public init?(_ text: String) {
        guard text.hasPrefix("redis://") else { return nil }
        var rest = text.dropFirst("redis://".count)
        var database = 0
        var user: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            let information = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = information.firstIndex(of: ":")
            guard let name = (colon.map { information[..<$0] } ?? information).percentDecoded else { return nil }
            user = name.isEmpty ? nil : name
            if let colon {
                guard let secret = information[information.index(after: colon)...].percentDecoded, !secret.isEmpty else { return nil }
                password = secret
            }
        }
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            guard path.isEmpty || Int(path) != nil, (Int(path) ?? 0) >= 0 else { return nil }
            database = Int(path) ?? 0
            rest = rest[..<slash]
        }
        guard !rest.isEmpty else { return nil }
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
        self.user = user
        self.password = password
        passwordInURL = password != nil
    }

    /// The address with `password` for AUTH, unless the URL carried one.
    public func withPassword(_ password: String?) -> RedisAddress {
        var address = self
        if address.password == nil, let password, !password.isEmpty { address.password = password }
        return address
    }

    /// `redis://user@host:port/db`: never the password.
    public var description: String {
        "redis://\(user.map { $0 + "@" } ?? "")\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)"
    }
}
