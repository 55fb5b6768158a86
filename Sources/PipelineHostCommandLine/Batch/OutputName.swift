import Crypto
import PipelineHost

/// Names output files <stem>-<hash>.<profile>.<ext>. The hash is of the normalized source key,
/// so two salted URLs of one image get the same name, and 64 bits of SHA-256 make two
/// different images sharing a name a chance of about one in 10^10 even in a batch of 100,000
/// covers that all have the stem `getCoverArt`. `OutputClaims` catches the rest.
enum OutputName {
    static func path(for result: PipelineResult, in directory: String) -> String {
        path(
            source: result.request.source, key: result.sourceKey, profile: result.request.profile,
            format: result.format, in: directory)
    }

    /// The name for `source` (stable key `key`) through `profile` in `format`: also where
    /// `run --fallback` writes a failed source's fallback.
    static func path(source: String, key: String, profile: String, format: String?, in directory: String) -> String {
        let name = "\(stem(of: source))-\(hash(key)).\(profile).\(fileExtension(format))"
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    static func stem(of source: String) -> String {
        let path = SourceLocation(source).resource
        var last = path.split(separator: "/").last.map(String.init) ?? ""
        if last.contains(":") { last = "" }  // "https:" from a bare host
        if let dot = last.lastIndex(of: "."), dot != last.startIndex { last = String(last[..<dot]) }
        let safe = String(
            last.unicodeScalars.map { c -> Character in
                c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "-" || c == "_" ? Character(c) : "_"
            }.prefix(40))
        return safe.isEmpty ? "image" : safe
    }

    /// The first 64 bits of SHA-256 as 16 hex digits: stable across runs and platforms.
    static func hash(_ text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).prefix(8).hexDigits
    }

    static func fileExtension(_ format: String?) -> String {
        switch format {
        case "jpeg": "jpg"
        case let format? where FormatChoice.textFormats.contains(format): "txt"
        case let format?: format
        case nil: "bin"
        }
    }
}

/// The output files one run has written and whose source each holds, so a name that two
/// different sources reach (a hash collision) is an error for the second, never a silent
/// overwrite. The same source written again (a repeated line) is fine: same bytes.
struct OutputClaims {
    private var owners: [String: String] = [:]

    /// Claims `path` for the source with stable key `key`; false when another source has it.
    mutating func claim(_ path: String, for key: String) -> Bool {
        if let owner = owners[path] { return owner == key }
        owners[path] = key
        return true
    }
}
