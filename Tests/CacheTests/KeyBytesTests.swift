import PipelineHost
import TestSupport
import Testing

/// Distinct long URLs must not grow memory without bound: what the pipeline keeps per request
/// (the memo of keys, the memory cache's keys) is counted in bytes.
@Suite("memory per distinct URL is bounded by bytes", .needs(.network))
struct KeyBytesTests {
    @Test("300 distinct 60 KB URLs: the key memo stays under its byte limit")
    func longURLs() async throws {
        // Only https may be fetched: each http request fails at once, with no transfer, and is
        // still remembered.
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(
                """
                profile "p" { fetch { schemes = { "https" } }, decode {}, encode {}, cache { memory = true } }
                """))
        let padding = String(repeating: "a", count: 60_000)
        for index in 0..<300 {
            _ = try? await pipeline.image(
                for: ImageRequest(source: "http://h.example/\(index)/\(padding).jpg", profile: "p"))
        }
        let bytes = await pipeline.activity().keyMemoBytes
        #expect(bytes > 0, "the memo keeps recent requests")
        #expect(bytes <= 16 << 20, "\(bytes) bytes; 300 requests of 60 KB would be 36 MB or more")
    }
}
