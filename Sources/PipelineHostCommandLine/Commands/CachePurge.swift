import ArgumentParser
import PipelineHost

extension CacheCommand {
    /// `pipelinehost cache purge SOURCE...`: drop every original and variant of sources from
    /// the disk cache, the shared tier and the object store, and have serve nodes that share
    /// Redis drop their memory and disk copies.
    struct Purge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "purge",
            abstract: "Drop every original and variant of sources from every cache, on every node.",
            discussion: """
                Removes each source's entries, for every profile and option, from the disk cache \
                (--cache-dir, or the directories the profile file's cache stages name), from Redis \
                (--shared-cache) and from the object store (--object-store). Serve nodes that share \
                the Redis hear the purge and drop their memory and disk copies. Give the profile \
                file with --profiles when its normalize stage rewrites sources (dropped salts, \
                lower-cased hosts), so the purge finds what the profiles keyed.

                Examples:
                  pipelinehost cache purge https://example.com/cover.jpg
                  pipelinehost cache purge --profiles covers.lua --shared-cache redis://10.0.0.5:6379 \\
                    --object-store s3://thumbs/v1 s3://photos/a/cat.jpg
                """)

        @Option(
            name: .customLong("profiles"),
            help: ArgumentHelp(
                "The profile file whose normalize stages key the sources, and whose cache stages name the directories.",
                valueName: "profile.lua"))
        var profileFile: String?

        @OptionGroup(title: "Cache") var cache: CacheOptions

        @Argument(help: ArgumentHelp("The sources to purge, as requests name them.", valueName: "source"))
        var sources: [String]

        func validate() throws {
            guard !sources.isEmpty else { throw ValidationError("name at least one source to purge") }
            if cache.noCache || cache.refresh || cache.offline {
                throw ValidationError("purge takes neither --no-cache, --refresh nor --offline")
            }
        }

        func run() async throws {
            var set = ProfileSet(file: "(none)", profiles: [])
            if let file = profileFile { set = try await BlockingExecutor.shared.run { try loadProfiles(file) } }
            try await cache.checkSharedCredentials()
            var settings = try cache.settingsWithSharedTier()
            if profileFile == nil, settings.directory == nil { settings.directory = DiskCache.defaultDirectory }
            let pipeline = Pipeline(profiles: set, configuration: PipelineConfiguration(cache: settings))
            let report = await pipeline.purge(sources: sources)
            for tier in ["memory", "disk", "shared", "store"] {
                guard let count = report.removed[tier], tier != "memory" else { continue }
                printOutput("\(tier): removed \(count) entries")
            }
            for failure in report.failures { printError("purge failed: \(failure)") }
            if !report.failures.isEmpty { throw ExitCode(1) }
        }
    }
}
