#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PipelineHost

/// Turns a source location into a URL curl may fetch.
enum FetchURL {
    static let schemes: Set<String> = ["http", "https", "file"]

    static func resolve(_ location: String, allowing allowed: Set<String>) throws(PipelineError) -> String {
        guard !location.isEmpty else { throw PipelineError(.invalidSource, "empty source") }
        guard let scheme = SourceLocation(location).scheme else {
            guard allowed.contains("file") else {
                throw PipelineError(.invalidSource, "local files are not allowed (fetch schemes: \(list(allowed)))")
            }
            // A plain path. URL(fileURLWithPath:) makes it absolute and percent-encodes it.
            return URL(fileURLWithPath: location).absoluteString
        }
        guard schemes.contains(scheme) else {
            throw PipelineError(.invalidSource, "unsupported scheme '\(scheme)' (use http, https, file or a path)")
        }
        guard allowed.contains(scheme) else {
            throw PipelineError(.invalidSource, "scheme '\(scheme)' is not allowed (fetch schemes: \(list(allowed)))")
        }
        return location
    }

    private static func list(_ schemes: Set<String>) -> String { schemes.sorted().joined(separator: ", ") }
}
