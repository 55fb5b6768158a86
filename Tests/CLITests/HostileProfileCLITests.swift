import Foundation
import PipelineHost
import TestSupport
import Testing

@Suite("pipelinehost: a hostile profile stops with exit 2, in bounded memory", .needs(.pixels, .process))
struct HostileProfileCLITests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    /// docs/PROFILES.md's promise: stopped within the time limit plus a second (the test's timeout
    /// only keeps a hang from blocking the suite) and under the 32 MB memory limit plus 100 MB.
    @Test("check and run stop each hostile profile", arguments: HostileProfiles.all)
    func stopped(_ hostile: HostileProfiles.Case) async throws {
        let path = try directory.write("hostile.lua", Array(hostile.lua.utf8))
        for arguments in [
            ["check", path], ["run", path, Fixtures.path("examples/sample.jpg"), "--output-dir", directory.path],
        ] {
            let run = try MeasuredProcess.run(arguments, in: directory.path, timeout: 30)
            #expect(run.status == 2, "\(arguments[0]): \(run.output)")
            #expect(run.output.hasPrefix("error: \(path)"), "\(run.output)")
            #expect(run.output.contains(hostile.expected), "\(run.output)")
            #expect(run.output.split(separator: "\n").count == 1, "\(run.output)")
            #expect(run.peakKilobytes < (32 + 100) * 1024, "\(arguments[0]) peaked at \(run.peakKilobytes) KB")
        }
    }

    @Test("SIGINT while a profile loads exits 130 with a message")
    func interruptedWhileLoading() async throws {
        // A sort that takes the whole second the time limit allows.
        let slow =
            "local t = setmetatable({}, {__len = function() return 2^31 - 2 end, __index = type, __newindex = rawequal})\n"
            + "table.sort(t)\nprofile \"x\" { fetch {}, decode {}, encode {} }\n"
        let path = try directory.write("slow.lua", Array(slow.utf8))
        let running = try CLIProcess.start(["check", path])
        // Sent once the process catches SIGINT, which it does only while it loads the profile,
        // from a pool thread: on time however busy the test threads are.
        await BlockingExecutor.shared.run {
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, running.isRunning, !ProcFacts.catches(SIGINT, pid: running.pid) {
                Thread.sleep(forTimeInterval: 0.002)
            }
            running.interrupt()
        }
        let outcome = try await running.finished(timeout: 30)
        #expect(outcome.status == 130)
        #expect(outcome.stderr == "interrupted while loading \(path)\n")
    }
}
