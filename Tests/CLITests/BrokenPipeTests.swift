import Foundation
import TestSupport
import Testing

@Suite(
    "pipelinehost run --json | head: ends by SIGPIPE, leaves no temporary files", .needs(.pixels, .network, .process))
struct BrokenPipeTests {
    @Test("the reader leaving mid-batch stops the run cleanly")
    func head() async throws {
        let server = try LoopbackServer()
        let directory = try TemporaryDirectory()
        // The first source answers at once; the rest only once head has gone, so the run is
        // still mid-batch when it does, however fast or slow the machine.
        for id in 1...40 {
            let image = LoopbackServer.Response.ok(
                Fixtures.quadrants(width: 200 + id, height: 150), contentType: "image/jpeg")
            server.route("/c/\(id).jpg", id == 1 ? image : .held(gate: "head-left", image))
        }
        let sources = (1...40).map { "'" + server.url("/c/\($0).jpg") + "'" }.joined(separator: " ")
        let out = directory.file("out"), cache = directory.file("cache")
        let command =
            "set -o pipefail; '\(CLIProcess.executable)' run '\(Fixtures.path("examples/thumbnail.lua"))' \(sources) "
            + "--json --jobs 4 --output-dir '\(out)' --cache-dir '\(cache)' | { head -n 1; echo 'head left' >&2; }; "
            + "echo \"status=$?\" >&2"
        let running = try CLIProcess.start(["-c", command], executable: "/bin/bash")
        #expect(await eventually { running.outputSoFar.contains("head left") })
        server.open("head-left")
        let run = try await running.finished(timeout: 120)
        #expect(run.stdout.split(separator: "\n").count == 1)
        #expect(run.stderr.hasSuffix("status=141\n"), "\(run.stderr)")
        let written = (try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []
        #expect(!written.isEmpty && written.count < 40, "the run stopped early: \(written.count) files")
        #expect(written.allSatisfy { $0.hasSuffix(".thumbnail.jpg") }, "\(written)")
        let cacheTemporaries = (try? FileManager.default.contentsOfDirectory(atPath: cache + "/tmp")) ?? []
        #expect(cacheTemporaries.isEmpty, "\(cacheTemporaries)")
    }
}
