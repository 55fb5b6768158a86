import Foundation
import TestSupport
import Testing

/// Every number a flag or a profile gives is checked where it is read: an edge is a usage error
/// (exit 2, one line naming the flag) or a documented saturation, never a trap.
@Suite("pipelinehost: numbers at their edges are usage errors, never traps", .needs(.process))
struct NumberEdgeTests {
    static let edges = ["1e300", "-1e300", "nan", "inf", "-1", "9223372036854775807", "-9223372036854775808", "1e-300"]

    /// Each flag with the command it belongs to; the edges above are out of range for all of them
    /// (1e-300 rounds to no time for the flags that must be more than 0, and is a fraction for counts).
    static let flags: [(command: [String], flag: String)] = [
        (["serve", "examples/thumbnail.lua"], "--drain-timeout"),
        (["serve", "examples/thumbnail.lua"], "--request-timeout"),
        (["serve", "examples/thumbnail.lua"], "--head-timeout"),
        (["serve", "examples/thumbnail.lua"], "--idle-timeout"),
        (["serve", "examples/thumbnail.lua"], "--send-timeout"),
        (["serve", "examples/thumbnail.lua"], "--max-queue"),
        (["serve", "examples/thumbnail.lua"], "--max-connections"),
        (["serve", "examples/thumbnail.lua"], "--connections"),
        (["serve", "examples/thumbnail.lua"], "--per-host"),
        (["serve", "examples/thumbnail.lua"], "--port"),
        (["serve", "examples/thumbnail.lua"], "--shared-timeout"),
        (["serve", "examples/thumbnail.lua"], "--shared-lease"),
        (["serve", "examples/thumbnail.lua"], "--shared-wait"),
        (["run", "examples/thumbnail.lua", "examples/sample.jpg"], "--jobs"),
        (["run", "examples/thumbnail.lua", "examples/sample.jpg"], "--connections"),
        (["run", "examples/thumbnail.lua", "examples/sample.jpg"], "--per-host"),
        (["run", "examples/thumbnail.lua", "examples/sample.jpg"], "--shared-timeout"),
        (["info", "examples/thumbnail.lua", "examples/sample.jpg"], "--jobs"),
    ]

    @Test("each numeric flag refuses the edges", arguments: flags)
    func flagEdges(_ command: [String], _ flag: String) async throws {
        for edge in Self.edges {
            // "-1e300" and friends are written --flag=value, so they are not read as options.
            let outcome = try await CLIProcess.run(command + ["\(flag)=\(edge)"], in: Fixtures.root.path)
            #expect(outcome.status == 2, "\(flag)=\(edge): \(outcome.stderr)")
            #expect(outcome.stderr.contains("Error:") || outcome.stderr.contains("error:"), "\(flag)=\(edge)")
            #expect(!outcome.stderr.contains("Fatal error"), "\(flag)=\(edge): \(outcome.stderr)")
            #expect(outcome.stdout.isEmpty)
        }
    }

    /// A hung tier must cost a request time, never fail it: serve refuses tier limits that its
    /// own request deadline would cut short, naming them, before it starts.
    @Test(
        "serve refuses tier time limits that --request-timeout would cut short",
        arguments: [
            (["--object-store", "s3://bucket", "--store-timeout", "30000"], "2 × --store-timeout 30000 ms"),
            (
                ["--object-store", "s3://bucket", "--store-timeout", "10000", "--request-timeout", "20"],
                "--store-timeout"
            ),
            (["--shared-cache", "redis://127.0.0.1:1", "--shared-wait", "30"], "--shared-wait 30.0 s"),
            (
                ["--shared-cache", "redis://127.0.0.1:1", "--object-store", "s3://bucket", "--request-timeout", "18"],
                "2 × --shared-timeout 50 ms + --shared-wait 15.0 s + 2 × --store-timeout 2000 ms"
            ),
        ])
    func tierWaitsPastTheDeadline(_ flags: [String], _ named: String) async throws {
        let outcome = try await CLIProcess.run(["serve", "examples/thumbnail.lua"] + flags, in: Fixtures.root.path)
        #expect(outcome.status == 2, "\(outcome.stderr)")
        #expect(outcome.stderr.contains(named) && outcome.stderr.contains("--request-timeout"), "\(outcome.stderr)")
    }

    @Test("a value at the top of its range is accepted")
    func topOfRange() async throws {
        let directory = try TemporaryDirectory()
        let check = try await CLIProcess.run(
            [
                "run", "examples/thumbnail.lua", "examples/sample.jpg", "--jobs", "10000",
                "--connections", "10000", "--per-host", "10000", "--shared-timeout", "60000",
                "--shared-lease", "3600", "--shared-wait", "3600", "-o", directory.file("out.jpg"),
            ],
            in: Fixtures.root.path)
        #expect(check.status == 0, "\(check.stderr)")
    }

    @Test(
        "an environment switch other than 0 or 1 is an error that names it",
        arguments: [
            ("PIPELINEHOST_VIPS_VECTOR", "yes"), ("PIPELINEHOST_VIPS_VECTOR", "2"),
            ("PIPELINEHOST_JPEG_HUGE_PAGES", "on"), ("PIPELINEHOST_JPEG_HUGE_PAGES", ""),
            ("PIPELINEHOST_COLOUR_TRANSFORM_CACHE", "off"), ("PIPELINEHOST_JPEG_EARLY_STOP", "no"),
            ("PIPELINEHOST_AVIF_LIBAVIF", "true"), ("PIPELINEHOST_GIF_THREADS", "2"),
            ("PIPELINEHOST_REDUCEH", "off"),
        ])
    func environmentSwitch(name: String, value: String) async throws {
        let directory = try TemporaryDirectory()
        let run = try await CLIProcess.run(
            [
                "run", "examples/thumbnail.lua", "examples/sample.jpg", "--no-cache",
                "--output-dir", directory.path,
            ],
            in: Fixtures.root.path, environment: [name: value])
        #expect(run.status == 1)
        #expect(run.stderr.contains("\(name) must be 0 or 1, not \"\(value)\""), "\(run.stderr)")
        #expect(directory.contents.isEmpty)
    }

    @Test("check counts the variants of options whose product passes Int.max without trapping")
    func variantCountPastIntMax() async throws {
        let directory = try TemporaryDirectory()
        // Seven options of 1,000 values each: 10^21 variants of one source.
        let lua = """
            profile "many" {
              params {
                a = { from = 1000000, to = 1999000, step = 1000 }, b = { from = 0, to = 999, step = 1 },
                c = { from = 2000, to = 2999, step = 1 }, d = { from = 1, to = 500.5, step = 0.5 },
                e = { from = 1000, to = 1000000, step = 1000 }, f = { from = 1, to = 1000, step = 1 }, g = { from = 1, to = 1000, step = 1 },
              },
              fetch { max_bytes = param "a", low_speed_limit = param "b", max_header_bytes = param "c", timeout = param "d" },
              decode { max_pixels = param "e" },
              downsample { width = param "f", height = param "g" },
              encode {},
            }
            """
        let path = try directory.write("many.lua", Array(lua.utf8))
        let check = try await CLIProcess.run(["check", path])
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("  more than 9223372036854775807 variants of each source\n"), "\(check.stdout)")
    }
}
