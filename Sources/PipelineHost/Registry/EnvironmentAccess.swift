#if canImport(Glibc)
    import Glibc
#endif

/// Which environment variables a profile may name. Profiles are semi-trusted: a service runs
/// files an operator may not have written line by line, and a parameter that names a variable
/// (`subsonic_auth { password_env = ... }`) would otherwise send any secret of the process,
/// the service's own signing key included, to any origin.
///
/// A profile may name variables that start with `PIPELINEHOST_SECRET_`, and those the operator
/// allows by name (`--allow-env NAME`). The service's own secrets (its signing keys and salts,
/// its Redis and shared-tier credentials, the AWS credentials its S3 sources and object store
/// sign with) are never readable, whatever is allowed. The policy is
/// the process's, like the environment it guards: a host sets it once at start.
public enum EnvironmentAccess {
    /// Variables with this prefix are readable by profiles without being named.
    public static let secretPrefix = "PIPELINEHOST_SECRET_"

    /// Names, or name prefixes ending in "_", that no profile may ever read.
    public static let reserved = [
        "PIPELINEHOST_KEY", "PIPELINEHOST_SALT", "PIPELINEHOST_REDIS", "PIPELINEHOST_SHARED_",
        "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID",
    ]

    private static let allowedNames = Locked(Set<String>())

    /// Lets profiles also read these variables (the operator's `--allow-env`). A reserved name
    /// is refused with the reason.
    public static func allow(_ names: some Sequence<String>) throws(ParameterError) {
        for name in names {
            if isReserved(name) {
                throw ParameterError("--allow-env \(name): the service's own secrets are never readable by profiles")
            }
        }
        allowedNames.withLock { $0.formUnion(names) }
    }

    /// Why a profile may not name `name`, or nil when it may.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "the variable name is empty" }
        if isReserved(name) { return "\(name) is one of the service's own secrets, which profiles never read" }
        if name.hasPrefix(secretPrefix) || allowedNames.withLock({ $0.contains(name) }) { return nil }
        return
            "\(name) is not readable by profiles: name it \(secretPrefix)..., or start pipelinehost with --allow-env \(name)"
    }

    /// The variable's value, if it is set, not empty and readable by profiles.
    public static func read(_ name: String) -> String? {
        guard problem(name) == nil, let raw = getenv(name), raw.pointee != 0 else { return nil }
        return String(cString: raw)
    }

    private static func isReserved(_ name: String) -> Bool {
        reserved.contains { $0.hasSuffix("_") ? name.hasPrefix($0) : name == $0 || name.hasPrefix($0 + "_") }
    }
}
