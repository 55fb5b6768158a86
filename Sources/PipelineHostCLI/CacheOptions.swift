import ArgumentParser
import PipelineHost

/// The cache flags of `run`, turned into the pipeline's `CacheSettings`.
struct CacheOptions: ParsableArguments {
    @Option(name: .customLong("cache-dir"), help: ArgumentHelp(
        "Disk cache directory. Wins over a profile's dir (default: $XDG_CACHE_HOME/pipelinehost, else ~/.cache/pipelinehost).",
        valueName: "dir"))
    var directory: String?

    @Option(name: .customLong("cache-size"), help: ArgumentHelp(
        "Most the disk cache may take, such as 500M or 2G; least recently used entries go first.", valueName: "size"))
    var size: ByteCount = ByteCount(1 << 30)

    @Flag(name: .customLong("no-cache"), help: "Neither look in nor store to any cache.")
    var noCache = false

    @Flag(name: .long, help: "Revalidate cached originals and remake variants (stored entries still serve on_error = \"stale\").")
    var refresh = false

    @Flag(name: .long, help: "Never transfer: serve only from the cache (stale entries too) and name every source that is missing.")
    var offline = false

    func validate() throws {
        if [noCache, refresh, offline].filter({ $0 }).count > 1 {
            throw ValidationError("use one of --no-cache, --refresh and --offline")
        }
    }

    var settings: CacheSettings {
        let mode: CacheSettings.Mode = noCache ? .off : refresh ? .refresh : offline ? .offline : .normal
        return CacheSettings(mode: mode, directory: directory, diskLimit: size.bytes)
    }
}

/// A byte count written as 1500, 64K, 500M or 2G (powers of 1024).
struct ByteCount: ExpressibleByArgument, Sendable {
    let bytes: Int

    init(_ bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        var text = Substring(argument.uppercased())
        if text.hasSuffix("B") { text = text.dropLast() }
        var multiplier = 1
        if let last = text.last, let unit = units[last] {
            multiplier = unit
            text = text.dropLast()
        }
        guard let value = Double(text), value >= 0, value * Double(multiplier) < 1e18 else { return nil }
        bytes = Int(value * Double(multiplier))
    }

    var defaultValueDescription: String { ResultLine.bytes(bytes) }
}
