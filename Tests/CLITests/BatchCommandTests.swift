import Foundation
import PipelineHost
import TestSupport
import Testing

@Suite(
    "pipelinehost run on batches, as a subprocess", .needs(.pixels, .network, .process), .loopbackOrigin)
struct BatchCommandTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let subsonic = Fixtures.path("examples/salted-urls.lua")

    init() throws {
        directory = try TemporaryDirectory()
        for id in 1...10 {
            server.route("/cover-\(id).jpg", .ok(Fixtures.quadrants(width: 400 + id * 10, height: 300)))
        }
    }

    /// Parses the `--stats` object.
    private func stats(_ stdout: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(stdout.utf8))
        return try #require(object as? [String: Any])
    }

    @Test("--stats: a batch of 50% duplicates with fresh salts fetches each distinct source once")
    func duplicatesFetchOnce() async throws {
        // 10 images, each asked for twice with different auth salts, shuffled.
        var urls: [String] = []
        for id in 1...10 {
            for salt in ["x\(id)", "y\(id)"] {
                urls.append(server.url("/cover-\(id).jpg?id=\(id)&u=me&t=t-\(salt)&s=\(salt)&v=1.16.1&c=app"))
            }
        }
        urls.shuffle()
        let list = try directory.write("urls.txt", Array(urls.joined(separator: "\n").utf8))
        let run = try await CLIProcess.run([
            "run", subsonic, "--profile", "thumbnail", "--input-list", list,
            "--output-dir", directory.file("out"), "--stats", "--jobs", "2",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let figures = try stats(run.stdout)
        #expect(figures["requests"] as? Int == 20)
        #expect(figures["succeeded"] as? Int == 20)
        #expect(figures["fetches"] as? Int == 10)
        #expect(figures["coalesced"] as? Int == 10)
        #expect(figures["decodes"] as? Int == 10)
        #expect(figures["jpeg_decodes_stopped_early"] as? Int == 0, "baseline covers read every scan")
        #expect(figures["avif_decodes_libavif"] as? Int == 0, "no AVIF here")
        #expect(figures["failed"] as? Int == 0)
        #expect((1...10).map { server.requestCount("/cover-\($0).jpg") } == Array(repeating: 1, count: 10))
        // With --stats the result lines go to standard error, so standard output is only JSON.
        #expect(run.stderr.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == 20)
        #expect(!run.stderr.contains("t-x") && !run.stdout.contains("t-x"))
    }

    @Test("two profiles over a list on standard input: one transfer per source, both outputs written")
    func twoProfilesFromStdin() async throws {
        let urls = (1...4).map { server.url("/cover-\($0).jpg?id=\($0)") }
        let run = try await CLIProcess.run(
            [
                "run", subsonic, "--profile", "thumbnail", "--profile", "blurred-background",
                "--input-list", "-", "--output-dir", directory.path, "--stats",
            ],
            input: "# covers\n" + urls.joined(separator: "\n") + "\n\n")
        #expect(run.status == 0, "\(run.stderr)")
        let figures = try stats(run.stdout)
        #expect(figures["requests"] as? Int == 8)
        #expect(figures["fetches"] as? Int == 4)
        #expect(
            figures["bytes_fetched"] as? Int
                == (1...4).reduce(0) { $0 + Fixtures.quadrants(width: 400 + $1 * 10, height: 300).count })
        let files = directory.contents
        #expect(files.filter { $0.hasSuffix(".thumbnail.jpg") }.count == 4)
        #expect(files.filter { $0.hasSuffix(".blurred-background.jpg") }.count == 4)
    }

    @Test("Ctrl-C mid-batch: exit 130, transfers aborted, a summary, and no temporary or partial files")
    func interrupt() async throws {
        server.route("/fast.jpg", .ok(Fixtures.sample, contentType: "image/jpeg"))
        // The slow sources send a little and then nothing: only the interrupt ends them.
        for n in 1...4 { server.route("/slow-\(n).jpg", .stalled(Fixtures.sample, gate: "never", sent: 256)) }
        let out = directory.file("out")
        let sources = [server.url("/fast.jpg")] + (1...4).map { server.url("/slow-\($0).jpg") }
        // Five transfer slots for the host: the fast one never waits behind a slow one, whatever
        // order the cache lookups before them finish in.
        // thumbnail.lua with 600 s for a transfer and for a stall: only the test's interrupt ends
        // the slow transfers, even on a machine so busy that the example's 10 s would pass first.
        let example = try String(contentsOfFile: Fixtures.path("examples/thumbnail.lua"), encoding: .utf8)
        let profile = try directory.write(
            "thumbnail.lua",
            Array(example.replacingOccurrences(of: "timeout = 10,", with: "timeout = 600, low_speed_time = 600,").utf8))
        #expect(profile != Fixtures.path("examples/thumbnail.lua") && example.contains("timeout = 10,"))
        let running = try CLIProcess.start(
            ["run", profile] + sources + ["--output-dir", out, "--stats", "--per-host", "5"])
        // Interrupt once the fast one is written and the slow ones are downloading.
        // Polled on a pool thread, so the interrupt comes on time however busy the test threads are.
        let fast = server.url("/fast.jpg")
        await BlockingExecutor.shared.run {
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline,
                !(running.outputSoFar.contains("ok      \(fast)")
                    && (1...4).allSatisfy({ server.requestCount("/slow-\($0).jpg") == 1 }))
            {
                Thread.sleep(forTimeInterval: 0.02)
            }
            running.interrupt()
        }
        let run = try await running.finished(timeout: 30)
        #expect(run.status == 130, "\(run.output)")
        #expect(run.stderr.contains("interrupted: 1 of 5 finished (1 ok, 0 failed), 4 cancelled, 0 not started"))
        let figures = try stats(run.stdout)
        #expect(figures["interrupted"] as? Bool == true)
        #expect(figures["cancelled"] as? Int == 4)
        let files = try FileManager.default.contentsOfDirectory(atPath: out)
        #expect(files.count == 1 && files[0].hasPrefix("fast-") && files[0].hasSuffix(".thumbnail.jpg"))
        let written = try #require(
            Fixtures.info([UInt8](try Data(contentsOf: URL(fileURLWithPath: out + "/" + files[0])))))
        #expect((written.width, written.height) == (300, 300))
        // The slow transfers were cut off, not left to finish: the server's next write fails.
        let cutOff = { (1...4).allSatisfy { server.abortedCount("/slow-\($0).jpg") == 1 } }
        #expect(await eventually(cutOff))
    }

    @Test("on a terminal a live progress line shows done, failed, rate and ETA; in a pipe it does not")
    func progress() async throws {
        server.route("/missing.jpg", .status(404))
        let sources = (1...3).map { server.url("/cover-\($0).jpg") } + [server.url("/missing.jpg")]
        let arguments =
            ["run", Fixtures.path("examples/thumbnail.lua")] + sources + [
                "--output-dir", directory.path, "--jobs", "1",
            ]
        let terminal = try await CLIProcess.runInTerminal(arguments)
        #expect(terminal.status == 1, "\(terminal.output)")
        #expect(terminal.output.contains("] 1/4  ok 1  failed 0  "))
        #expect(terminal.output.contains("ETA "))
        #expect(terminal.output.contains("[########################] 4/4  ok 3  failed 1  "))
        let piped = try await CLIProcess.run(arguments)
        #expect(piped.status == 1)
        #expect(!piped.output.contains("\u{1B}[K") && !piped.output.contains("ETA"))
        #expect(piped.stdout.split(separator: "\n").count == 3)
    }
}
