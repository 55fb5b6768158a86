import PipelineHost

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns a source location into the URL curl fetches, and the host curl must read in it.
enum FetchURL {
    static let schemes: Set<String> = ["http", "https", "file"]

    /// A URL for curl, with the host and port the caller's policy saw in it (nil for files):
    /// the transfer refuses to start when libcurl's own parse names another.
    struct Resolved: Equatable {
        let url: String
        let host: String?
        let port: Int?
    }

    static func resolve(_ location: String, allowing allowed: Set<String>) throws(PipelineError) -> Resolved {
        guard !location.isEmpty else { throw PipelineError(.invalidSource, "empty source") }
        let parsed = SourceLocation(location)
        if let ambiguity = parsed.ambiguity { throw PipelineError(.invalidSource, "ambiguous source: \(ambiguity)") }
        guard let scheme = parsed.scheme else {
            guard allowed.contains("file") else {
                throw PipelineError(.invalidSource, "local files are not allowed (fetch schemes: \(list(allowed)))")
            }
            // A plain path. URL(fileURLWithPath:) makes it absolute and percent-encodes it.
            return Resolved(url: URL(fileURLWithPath: location).absoluteString, host: nil, port: nil)
        }
        guard schemes.contains(scheme) else {
            throw PipelineError(.invalidSource, "unsupported scheme '\(scheme)' (use http, https, file or a path)")
        }
        guard allowed.contains(scheme) else {
            throw PipelineError(.invalidSource, "scheme '\(scheme)' is not allowed (fetch schemes: \(list(allowed)))")
        }
        // The fragment never reaches a server; the rest is the text the policy and key read.
        let url = String(parsed.resource) + (parsed.query.map { "?" + $0 } ?? "")
        return Resolved(url: url, host: scheme == "file" ? nil : parsed.host, port: parsed.port)
    }

    private static func list(_ schemes: Set<String>) -> String { schemes.sorted().joined(separator: ", ") }
}
