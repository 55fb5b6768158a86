import TestSupport
import Testing

@testable import PipelineHost

/// What decode predicts an image's pixels cost, and the pipeline's memory budget acting on it:
/// real files, a real decode, and the figures the budget saw.
@Suite("the memory budget: decode's prediction, refusals and draws", .needs(.pixels), .serialized)
struct MemoryBudgetTests {
    let directory: TemporaryDirectory
    init() throws { directory = try TemporaryDirectory() }

    static let thumbnail =
        #"profile "p" { fetch {}, decode {}, downsample { size = 200 }, encode { format = "jpeg" } }"#
    static let mb = 1 << 20

    /// The sample (2400 x 1600) written by `vips` as `name`, such as "x.jpg[interlace]".
    func sample(_ name: String) async throws -> String {
        let sample = try directory.write("sample.jpg", Fixtures.sample)
        let bytes = try #require(try await ImageFiles.converted(sample, to: name, in: directory))
        return try directory.write(String(name.prefix { $0 != "[" }), bytes)
    }

    /// The prediction decode made for `path`, read back from a pipeline's refusal: a budget of
    /// 1 byte refuses any image that predicts a cost, naming it.
    func refusal(_ path: String) async throws -> PipelineError? {
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(Self.thumbnail), configuration: PipelineConfiguration(memoryBudget: 1))
        do {
            _ = try await pipeline.image(for: ImageRequest(source: path, profile: "p"))
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "a progressive JPEG predicts its coefficient buffer; a baseline one a strip; an interlaced PNG the whole image")
    func predictions() async throws {
        // 2400 x 1600 = 3.84 MP. Progressive 4:4:4 (Q 90 keeps full chroma): 2 bytes x 3 bands.
        let progressive = try await sample("p.jpg[interlace,Q=90]")
        let refused = try #require(try await refusal(progressive))
        #expect(refused.kind == .pixelLimit)
        #expect(refused.reason.contains("takes about 30.0 MB"), "\(refused.reason)")  // 22 MB + 8 MB working
        #expect(refused.reason.contains("more than the memory budget (1 B)"), "\(refused.reason)")
        // Progressive 4:2:0: luma and two quarter-size chroma bands.
        let subsampled = try #require(try await refusal(try await sample("s.jpg[interlace,Q=80]")))
        #expect(subsampled.reason.contains("takes about 19.0 MB"), "\(subsampled.reason)")
        // Baseline: 256 lines of 2400 RGB pixels, 1.8 MB, and the working allowance.
        let baseline = try #require(try await refusal(try await sample("b.jpg[Q=80]")))
        #expect(baseline.reason.contains("takes about 9.8 MB"), "\(baseline.reason)")
        // Interlaced PNG: every pixel, 11 MB.
        let interlaced = try #require(try await refusal(try await sample("i.png[interlace]")))
        #expect(interlaced.reason.contains("takes about 19.0 MB"), "\(interlaced.reason)")
    }

    @Test("within a budget, every request is answered and every draw comes back")
    func drawsComeBack() async throws {
        let progressive = try await sample("p.jpg[interlace,Q=90]")
        // 40 MB: one 30 MB decode at a time, so the others wait for it.
        let budget = 40 * Self.mb
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(Self.thumbnail),
            configuration: PipelineConfiguration(cpuStages: 4, memoryBudget: budget))
        let bytes = try Fixtures.read(progressive)
        let requests = try (0..<6).map {
            ImageRequest(source: try directory.write("copy\($0).jpg", bytes), profile: "p")
        }
        let outcomes = await TestPipeline.outcomes(requests, in: pipeline, window: 6)
        #expect(outcomes.allSatisfy { (try? $0.get())?.size?.width == 200 }, "\(outcomes)")
        let usage = try #require(pipeline.memoryUsage)
        #expect(usage.capacity == budget)
        #expect(usage.drawn == 0)
        #expect(usage.waits > 0)
        #expect(usage.refusals == 0)
    }

    @Test("work that waits past the configured wait fails overloaded, and the budget is whole again")
    func overloaded() async throws {
        let progressive = try await sample("p.jpg[interlace,Q=90]")
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(Self.thumbnail),
            configuration: PipelineConfiguration(memoryBudget: 40 * Self.mb, memoryWait: .milliseconds(1)))
        let memory = try #require(pipeline.memory)
        // Something else holds the whole budget: a work draw the test keeps.
        var held: MemoryDraw? = try #require(
            try? await memory.drawForWork(40 * Self.mb, priority: .high, limit: nil).get())
        let outcome = await TestPipeline.outcomes(
            [ImageRequest(source: progressive, profile: "p")], in: pipeline, window: 1)[0]
        guard case .failure(let error) = outcome else {
            Issue.record("answered while the budget was full")
            return
        }
        #expect(error.kind == .overloaded)
        #expect(error.reason.contains("the memory budget (40.0 MB) had no room for this image"), "\(error.reason)")
        #expect(memory.usage.timeouts == 1)
        // The failed request's body came back; only the test's draw is left, until it goes too.
        #expect(memory.drawn == 40 * Self.mb)
        #expect(held != nil)
        held = nil
        #expect(memory.drawn == 0)
    }
}
