#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import PipelineHost

/// The normalized form of a source location.
enum SourceKey {
    static func normalized(_ location: String, dropping dropped: Set<String>) throws(PipelineError) -> String {
        guard !Source.isPlainPath(location) else {
            // A plain path: its identity is the absolute path.
            let absolute = URL(fileURLWithPath: location).standardizedFileURL
            return absolute.absoluteString
        }
        guard var components = URLComponents(string: location), let scheme = components.scheme else {
            throw PipelineError(.invalidSource, "not a valid URL")
        }
        components.scheme = scheme.lowercased()
        components.host = components.host?.lowercased()
        components.user = nil
        components.password = nil
        components.fragment = nil
        if let port = components.port, port == defaultPort(scheme.lowercased()) { components.port = nil }
        if components.percentEncodedPath.isEmpty, components.host != nil { components.percentEncodedPath = "/" }
        if let items = components.percentEncodedQueryItems {
            let kept = items.filter { !dropped.contains($0.name) }
                .sorted { ($0.name, $0.value ?? "") < ($1.name, $1.value ?? "") }
            components.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        }
        guard let key = components.string else { throw PipelineError(.invalidSource, "not a valid URL") }
        return key
    }

    private static func defaultPort(_ scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }
}
