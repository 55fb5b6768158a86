import Foundation
import TestSupport
import Testing

/// The memory budget against the kernel's own limit: the real `pipelinehost serve` in a memory
/// cgroup, as in a memory-limited container, gets a burst of large progressive JPEGs whose
/// decodes need several times that limit together, from GETs and a prefetch at once.
@Suite(.serialized, .needs(.pixels, .network, .process), .loopbackOrigin)
struct MemoryBudgetServeTests {
    static let profile = """
        profile "thumb" {
          fetch  { block_private = true, allow_loopback = true, retries = 0 },
          decode { max_pixels = 60e6 },
          downsample { size = 300 },
          encode { format = "jpeg", quality = 80 },
        }
        """

    let origin = LoopbackServer.fixture
    let directory: TemporaryDirectory
    let profileFile: String

    init() throws {
        directory = try TemporaryDirectory()
        profileFile = try directory.write("serve.lua", Array(Self.profile.utf8))
    }

    @Test func aBurstThatNeedsSeveralTimesTheContainersMemoryIsServedWithinIt() async throws {
        // 6400 x 4267, progressive, no chroma subsampling: libjpeg holds every DCT coefficient,
        // about 164 MB, however small the output. Two at once pass 350 MB with the process: without
        // the budget the kernel OOM-kills serve and no request is answered.
        let sample = directory.file("sample.jpg")
        try Fixtures.write(sample, Fixtures.sample)
        let big = try #require(
            try await ImageFiles.converted(
                sample, to: "big.jpg[interlace,Q=90,no_subsample]", in: directory, operation: ["resize", "2.6667"]))
        guard let group = try MemoryGroup(limit: 350 << 20) else {
            Issue.record("no cgroup v1 memory controller at /sys/fs/cgroup/memory")
            return
        }
        defer { group.remove() }
        let service = try await ServeProcess(
            profileFile: profileFile,
            ["--allow-unsigned", "--no-cache", "--request-timeout", "900", "--no-access-log"],
            environment: ["MALLOC_ARENA_MAX": "2"], memoryGroup: group)
        #expect(service.running.outputSoFar.contains("memory budget 175.0 MB (half of cgroup v1"))
        let paths = (0..<24).map { index -> String in
            origin.route("/big-\(index).jpg", .ok(big, contentType: "image/jpeg"))
            return "/unsafe/thumb/" + base64url(origin.url("/big-\(index).jpg"))
        }
        // 16 GETs and a prefetch of 8 more, all at once.
        let prefetchBody = "[" + paths[16...].map { "\"\($0)\"" }.joined(separator: ",") + "]"
        let answers = try await withThrowingTaskGroup(of: HTTPAnswer.self) { group in
            for path in paths[..<16] {
                group.addTask { try await Curl.get(service.baseURL + path, maxTime: 1200) }
            }
            group.addTask {
                try await Curl.get(service.baseURL + "/prefetch", method: "POST", body: prefetchBody, maxTime: 60)
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let prefetched = answers.filter { $0.status == 202 }
        let images = answers.filter { $0.status != 202 }
        #expect(prefetched.count == 1)
        #expect(service.running.isRunning, "serve died: \(service.running.outputSoFar.suffix(2000))")
        #expect(group.oomKills == 0)
        for answer in images {
            #expect(
                answer.status == 200 || (answer.status == 503 && answer.headers["retry-after"] != nil),
                "\(answer.status): \(answer.text)")
        }
        #expect(images.filter { $0.status == 200 }.count >= 12, "\(images.map(\.status))")
        // The prefetch's 8 decodes drew from the same budget: every one of the 24 finishes.
        let finished = await eventually {
            await service.metric("pipelinehost_memory_drawn_bytes") == 0
                && (paths[16...].indices).allSatisfy { origin.requestCount("/big-\($0).jpg") == 1 }
        }
        #expect(finished)
        #expect(await service.metric("pipelinehost_memory_budget_bytes") == 183_500_800)
        // Work waited for memory: without the budget, two decodes ran at once (one per core).
        #expect((await service.metric("pipelinehost_memory_waits_total") ?? 0) > 0)
        _ = try await service.stop()
    }

}
