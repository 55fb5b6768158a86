import PipelineHost
import PipelineHostObjectStore
import PipelineHostRedis
import PipelineHostServe
import TestSupport
import Testing

/// A flag's default is the library's own setting, read from where the library keeps it, so an
/// operator on the command line and an app that embeds the library get the same service.
@Suite("flag defaults: each read from the library's settings")
struct FlagDefaultsTests {
    /// The "(default: ...)" that `--help` shows for `flag`, from a help wide enough that
    /// nothing wraps (a long flag's help starts on the line after its name).
    static func shownDefault(_ command: [String], _ flag: String) async throws -> String? {
        let help = try await CLIProcess.run(command + ["--help"], environment: ["COLUMNS": "1000"])
        let lines = help.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let start = lines.firstIndex(where: { $0.hasPrefix(flag + " ") || $0 == flag }) else { return nil }
        let entry = lines[start...].prefix { $0 == lines[start] || !$0.hasPrefix("-") }.joined(separator: " ")
        guard let from = entry.range(of: "(default: ") else { return nil }
        return String(entry[from.upperBound...].prefix { $0 != ")" })
    }

    @Test("serve's flags show ServeDefaults and the tiers' defaults")
    func serve() async throws {
        #expect(try await Self.shownDefault(["serve"], "--connections") == "\(ServeDefaults.transfers)")
        #expect(try await Self.shownDefault(["serve"], "--per-host") == "\(ServeDefaults.transfersPerHost)")
        #expect(try await Self.shownDefault(["serve"], "--max-queue") == "\(ServeDefaults.maxQueue)")
        #expect(try await Self.shownDefault(["serve"], "--request-timeout") == "\(ServeDefaults.requestSeconds)")
        #expect(
            try await Self.shownDefault(["serve"], "--shared-timeout")
                == "\(RedisClient.defaultTimeout.wholeMilliseconds)")
        #expect(try await Self.shownDefault(["serve"], "--shared-wait") == "\(LeaseSettings.defaultWait.seconds)")
        #expect(
            try await Self.shownDefault(["serve"], "--store-timeout") == "\(Int(ObjectStoreTier.defaultTimeout * 1000))"
        )
    }

    @Test("run's transfer flags show PipelineConfiguration's defaults")
    func run() async throws {
        #expect(try await Self.shownDefault(["run"], "--connections") == "\(PipelineConfiguration.defaultTransfers)")
        #expect(
            try await Self.shownDefault(["run"], "--per-host") == "\(PipelineConfiguration.defaultTransfersPerHost)")
    }

    /// An app that makes `ServeSettings` with its defaults gets serve's transfer slots, not a
    /// batch's (it got 8 and 4 while `serve` had 64 and 8), and the object store's time limit is
    /// `--store-timeout`'s (it was 5 s against the flag's 2).
    @Test("an embedded service has the command line's defaults")
    func embedded() throws {
        let settings = ServeSettings(signer: try URLSigner(keys: "", salts: ""), allowUnsigned: true)
        #expect(settings.pipeline.transfers == 64)
        #expect(settings.pipeline.transfersPerHost == 8)
        #expect(settings.maxQueue == 256)
        #expect(ObjectStoreTier.defaultTimeout == 2)
    }
}
