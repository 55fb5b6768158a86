import PipelineHost

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Turns a source location into the URL curl fetches, and the host curl must read in it.
package enum FetchURL {
    package static let schemes: Set<String> = ["http", "https", "file", "s3"]
    /// The schemes libcurl itself fetches.
    package static let curlSchemes: Set<String> = ["http", "https", "file"]

    /// The transfer for a source: its URL, and for `s3://BUCKET/KEY` the endpoint's URL of the
    /// object with the signature the AWS environment gives (`S3Configuration.current`).
    package static func request(for location: String, allowing allowed: Set<String>) throws(PipelineError)
        -> CurlTransfer.Request
    {
        guard SourceLocation(location).scheme == "s3" else {
            return CurlTransfer.Request(url: try resolve(location, allowing: allowed))
        }
        guard allowed.contains("s3") else {
            throw PipelineError(.invalidSource, "scheme 's3' is not allowed (fetch schemes: \(list(allowed)))")
        }
        let object = try S3Source(location)
        let configuration: S3Configuration
        switch S3Configuration.current {
        case .success(let value): configuration = value
        case .failure(let problem): throw PipelineError(.invalidSource, "\(problem)")
        }
        let url = try resolve(
            configuration.url(bucket: object.bucket, key: object.key, query: object.query),
            allowing: ["http", "https"])
        return CurlTransfer.Request(url: url, signing: configuration, bucket: object.bucket)
    }

    /// A URL for curl, with the host and port the caller's policy saw in it (nil for files):
    /// the transfer refuses to start when libcurl's own parse names another.
    package struct Resolved: Equatable {
        package let url: String
        package let host: String?
        package let port: Int?
    }

    package static func resolve(_ location: String, allowing allowed: Set<String>) throws(PipelineError) -> Resolved {
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
            throw PipelineError(.invalidSource, "unsupported scheme '\(scheme)' (use http, https, file, s3 or a path)")
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
