#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// `fallback { file = "missing.jpg", status = 404, max_age = 30 }`: the picture a profile
/// answers with when a source is gone. A profile setting, not a step: the file is read when
/// the profile loads, and its digest is part of the identity of everything made from it.
///
/// It is also the first stage of the chain that makes the fallback's variant (see
/// `ProfileSet.fallbackProfile(for:)`): in place of the profile's fetch it gives the file's
/// bytes, and the profile's own stages after fetch do the rest, so the fallback has the
/// profile's size and format and is computed once and kept like any variant.
public struct Fallback: Stage {
    struct Keys: ParameterList {
        let file = OptionalParameter<String>(
            "file", .string,
            doc: "the image, relative to the profile file; read when the profile loads")
        let status = Parameter<Int>(
            "status", .integer(200...599), default: 404,
            doc: "serve's HTTP status for a fallback answer")
        let maxAge = Parameter<Int>(
            "max_age", .integer(0...31_536_000), default: 30,
            doc: "seconds a CDN or browser may keep a fallback answer (Cache-Control: public, max-age=)")
        let on = Parameter<[String]>(
            "on", .stringList, default: ["not_found", "not_an_image"],
            doc:
                "the failures that fall back: not_found (HTTP 404 or 410) and error kinds (a missing local file is invalid_source) such as not_an_image, http_status, timeout, transport, too_large, decode_failed, unsupported_format, pixel_limit, blocked"
        )
    }

    /// What `on` may list: the kinds a source's failure can have, and not_found.
    static let failures: Set<String> = [
        "not_found", "invalid_source", "http_status", "transport", "timeout", "too_large",
        "not_an_image", "unsupported_format", "pixel_limit", "decode_failed", "blocked",
    ]
    /// The largest fallback file: it is held in memory for as long as the profile is.
    static let maxBytes = 20 << 20

    /// The definition the host registers (with the `cache` stage, in `CachePlugin`).
    public static let definition = StageDefinition(
        name: "fallback",
        summary:
            "A profile setting: when a source is not found or not an image (or a failure listed in on), answer with this "
            + "file sent through the profile's own stages after fetch, so it has the profile's size and format. Serve answers "
            + "it with status and Cache-Control: public, max-age=max_age, and X-Cache: fallback; run writes it only with "
            + "--fallback. Never stored under the failed source's key.",
        input: .source, output: .encoded, role: .fetch,
        capabilities: StageCapabilities(profileSetting: .fallback),
        parameters: Keys.specs,
        make: { try Fallback($0) })

    /// The file's bytes.
    public let bytes: ImageBytes
    /// The status serve answers a fallback with.
    public let status: Int
    /// Seconds a fallback answer may be kept downstream.
    public let maxAge: Int
    /// The failures that fall back (`on`).
    public let on: Set<String>
    /// SHA-256 of the file, in every key made from it.
    public let digest: String

    init(_ p: StageParameters) throws(ParameterError) {
        guard let file = p[\Keys.file], !file.isEmpty else {
            throw ParameterError("needs file, like fallback { file = \"missing.jpg\" }")
        }
        for kind in p[\Keys.on] where !Self.failures.contains(kind) {
            throw ParameterError(
                "on: '\(kind)' is not a failure that can fall back; choose from \(Self.failures.sorted().joined(separator: ", "))"
            )
        }
        let path = p.profileFile.map { CachePoint.resolve(file, relativeTo: $0) } ?? file
        let data: [UInt8]
        do {
            data = try BoundedFile.read(path, maxBytes: Self.maxBytes, allowEmpty: false)
        } catch {
            throw ParameterError("file \"\(file)\" \(error)")
        }
        bytes = ImageBytes(copying: data)
        digest = StageIdentity.digest(of: data)
        status = p[\Keys.status]
        maxAge = p[\Keys.maxAge]
        on = Set(p[\Keys.on])
    }

    /// The file's digest: a changed file makes new keys.
    public var identityDetail: String? { digest }

    /// The source a profile's fallback chain is asked for: the same for every failed source,
    /// so the fallback is made once per profile (and format) and kept under its own key.
    public static func source(of profile: String) -> String { "fallback:" + profile }

    /// Whether a source that failed with `error` gets the fallback.
    public func covers(_ error: PipelineError) -> Bool {
        if on.contains(error.kind.name) { return true }
        guard on.contains("not_found") else { return false }
        return error.upstreamStatus == 404 || error.upstreamStatus == 410
    }

    /// The file's bytes, in place of a fetch.
    public func run(_ input: StageValue, in context: StageContext) async throws -> StageValue {
        .encoded(EncodedImage(bytes: bytes))
    }
}
