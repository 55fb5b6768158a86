import PipelineHost

/// Which sources serve will fetch at all, before any stage runs: http and https URLs only (a
/// file path or file:// URL from a stranger must never be read), and, with
/// `--allow-source-host`, only the listed hosts. Private addresses are refused by fetch's
/// `block_private`, which serve turns on (`ServedProfiles`), after every redirect too.
enum SourcePolicy {
    static func check(_ source: String, allowedHosts: Set<String>, redaction: Redaction) throws(ServeFailure) {
        let location = SourceLocation(source)
        if let ambiguity = location.ambiguity {
            throw ServeFailure(
                .badRequest, "invalid_source", "ambiguous source: \(ambiguity)", source: redaction(source))
        }
        guard let scheme = location.scheme, scheme == "http" || scheme == "https" else {
            throw ServeFailure(
                .forbidden, "blocked", "serve fetches only http and https sources", source: redaction(source))
        }
        guard !allowedHosts.isEmpty else { return }
        guard let host = location.host, allowedHosts.contains(host) else {
            throw ServeFailure(
                .forbidden, "blocked", "the source's host is not in --allow-source-host",
                source: redaction(source))
        }
    }
}
