import CVips
import PipelineHost
import TestSupport
import Testing

/// libvips' run-time SIMD code (liborc) is on, and only behind the lock in ph_orc_guard.c:
/// liborc 0.4.33 races in its code allocator (scripts/orc-race).
@Suite("liborc behind the lock", .needs(.pixels), .serialized)
struct VectorTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    /// Resize and blur each compile Orc programs. 250 is not a JPEG scale of the 2400x1600 sample
    /// (300 is 1/8): a resize follows the decode. Serialized: each test counts the calls it made.
    let profile = #"profile "p" { fetch {}, decode {}, downsample { size = 250 }, blur { sigma = 3 }, encode {} }"#

    @Test("resize and blur compile Orc code, and every compile and free goes through the lock")
    func guarded() async throws {
        let path = try directory.write("input.jpg", Fixtures.sample)
        let before = ph_orc_guarded_calls()
        _ = try await TestPipeline.run(profile, source: path)
        #expect(ph_orc_guard_active() == 1, "libvips' calls reach liborc's compile and free directly")
        #expect(ph_vips_vector_enabled() == 1, "liborc is off (PIPELINEHOST_VIPS_VECTOR=0 or VIPS_NOVECTOR set?)")
        // A compile and a free for each program: at least one of each for the resize's and the blur's.
        #expect(ph_orc_guarded_calls() - before >= 4)
    }

    @Test("operations that compile Orc code, built and freed on 8 threads at once")
    func concurrent() async throws {
        // scripts/orc-race crashes within seconds this way without the lock.
        let small = Fixtures.quadrants(width: 480, height: 320)
        let path = try directory.write("small.png", small)
        let before = ph_orc_guarded_calls()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<25 { _ = try await TestPipeline.run(profile, source: path) }
                }
            }
            try await group.waitForAll()
        }
        #expect(ph_orc_guarded_calls() - before >= 8 * 25 * 4)
    }
}
