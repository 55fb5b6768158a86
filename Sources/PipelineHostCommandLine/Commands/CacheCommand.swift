import ArgumentParser
import PipelineHost

/// `pipelinehost cache stats|verify|prune|clear`: look after the disk cache.
struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect and maintain the disk cache; purge a source from every cache.",
        discussion: """
            The disk cache holds original bytes and, where a profile asks, display-ready variants, \
            one checksummed file per entry. Several processes may share one directory.

            Examples:
              pipelinehost cache stats
              pipelinehost cache verify --cache-dir /var/cache/covers
              pipelinehost cache prune --max-size 200M
              pipelinehost cache purge https://example.com/cover.jpg
            """,
        subcommands: [Stats.self, Verify.self, Prune.self, Clear.self, Purge.self])

    struct Location: ParsableArguments {
        @Option(
            name: .customLong("cache-dir"),
            help: ArgumentHelp(
                "The cache directory (default: $XDG_CACHE_HOME/pipelinehost, else ~/.cache/pipelinehost).",
                valueName: "dir"))
        var directory: String?

        var cache: DiskCache { DiskCache(directory: directory ?? DiskCache.defaultDirectory) }
    }

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "stats", abstract: "Show the directory, entry counts and bytes.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = location.cache
            let report = await BlockingExecutor.shared.run { cache.report() }
            printOutput(
                """
                cache directory: \(cache.directory)
                entries: \(report.entries) (\(report.originals) originals, \(report.variants) variants\
                \(report.unreadable > 0 ? ", \(report.unreadable) unreadable" : ""))
                bytes: \(report.bytes) (\(ResultLine.bytes(report.bytes)))
                temporary files: \(report.temporaries)
                """)
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check every entry's checksum; remove corrupt entries and abandoned temporary files.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = location.cache
            let result = await BlockingExecutor.shared.run { cache.verify() }
            printOutput(
                """
                cache directory: \(cache.directory)
                checked: \(result.checked)
                corrupt: \(result.corruptRemoved) (removed)
                abandoned temporary files: \(result.abandonedRemoved) (removed)
                """)
        }
    }

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "prune",
            abstract: "Remove least recently used entries until the cache fits --max-size.")
        @OptionGroup var location: Location
        @Option(
            name: .customLong("max-size"), help: ArgumentHelp("The size to prune to, such as 500M.", valueName: "size"))
        var maxSize = ByteCount(CacheSettings.defaultDiskLimit)

        func run() async throws {
            let cache = location.cache, target = maxSize.bytes
            let (removed, bytes) = await BlockingExecutor.shared.run { cache.prune(downTo: target) }
            printOutput(
                """
                cache directory: \(cache.directory)
                removed: \(removed) entries
                bytes: \(bytes) (\(ResultLine.bytes(bytes))), limit \(ResultLine.bytes(target))
                """)
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "clear", abstract: "Remove every entry.")
        @OptionGroup var location: Location

        func run() async throws {
            let cache = location.cache
            let removed = await BlockingExecutor.shared.run { cache.clear() }
            printOutput("cache directory: \(cache.directory)\nremoved: \(removed) entries")
        }
    }
}
