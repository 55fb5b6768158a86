import Foundation
import TestSupport
import Testing

@Suite(
    "pipelinehost run --json over bad input, as a subprocess", .needs(.pixels, .network, .process),
    .loopbackOrigin)
struct JSONOutputTests {
    let server = LoopbackServer.fixture
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
        BadInputs.serve(on: server)
        server.route("/good.jpg", .ok(Fixtures.quadrants(width: 640, height: 480), contentType: "image/jpeg"))
    }

    @Test("one JSON object per result and error, each error with its kind; the good source is written; exit 1")
    func badBatch() async throws {
        let profile = try directory.write("hardened.lua", Array(BadInputs.profile.utf8))
        // The cases of one profile: the stalled one, in a profile of its own, is BadInputTests'.
        let cases = BadInputs.cases.filter { $0.profile == "hardened" }
        let sources = (cases.map(\.path) + ["/good.jpg"]).map { server.url($0 + "?t=secret1&s=secret2") }
        // --no-progress: a batch that runs past 10 s on a busy machine prints a progress line,
        // which is not what this test is about.
        let run = try await CLIProcess.run(
            [
                "run", profile, "--profile", "hardened", "--output-dir", directory.file("out"), "--json", "--stats",
                "--no-progress",
            ] + sources)
        #expect(run.status == 1)
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        #expect(!run.stdout.contains("secret"))

        let lines = run.stdout.split(separator: "\n").map(String.init)
        let objects = try lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
        #expect(objects.count == sources.count + 1)
        #expect(objects.last?["type"] as? String == "stats")
        #expect(objects.last?["failed"] as? Int == cases.count)

        let byPath = Dictionary(
            objects.dropLast().map { object in
                let source = object["source"] as? String ?? ""
                return (URL(string: source)?.path ?? source, object)
            }
        ) { first, _ in first }
        for input in cases {
            let line = try #require(byPath[input.path], "\(input.name)")
            #expect(line["type"] as? String == "error")
            #expect(line["kind"] as? String == input.kind.name, "\(input.name)")
            #expect((line["reason"] as? String)?.hasPrefix(input.reason) == true, "\(input.name)")
            #expect((line["message"] as? String)?.hasSuffix(": " + (line["reason"] as? String ?? "")) == true)
        }
        #expect(byPath["/bad/missing.jpg"]?["http_status"] as? Int == 404)
        #expect(byPath["/bad/busy.jpg"]?["retry_after"] as? Int == 1)
        #expect(byPath["/bad/login.jpg"]?["sniffed_type"] as? String == "text/html")

        let good = try #require(byPath["/good.jpg"])
        #expect(good["type"] as? String == "result")
        #expect((good["width"] as? Int, good["height"] as? Int) == (64, 48))
        let output = try #require(good["output"] as? String)
        #expect(Fixtures.info(try Fixtures.read(output))?.format == "jpeg")
    }
}
