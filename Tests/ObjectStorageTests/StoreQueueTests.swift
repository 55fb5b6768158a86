import Foundation
import PipelineHostTransfer
import TestSupport
import Testing

@testable import PipelineHost
@testable import PipelineHostObjectStore

/// A store that never answers keeps every value queued for it until its timeout: the tier holds
/// at most `maxQueuedBytes` of them, and drops and counts the rest.
@Suite(.needs(.network))
struct StoreQueueTests {
    @Test func aHungStoreHoldsNoMoreQueuedBytesThanItsBound() async throws {
        let hung = try HungListener()
        defer { hung.close() }
        let tier = ObjectStoreTier(
            location: try #require(ObjectStoreLocation("s3://thumbs/v1")),
            configuration: S3Configuration(
                accessKeyID: "AKIAEXAMPLE", secretAccessKey: "secret", endpoint: "http://127.0.0.1:\(hung.port)"),
            timeout: 600, maxQueuedBytes: 10 << 20)
        let point = CachePoint(
            CachePolicy(memory: false, disk: true), layer: .variant, settings: CacheSettings(), profileFile: "/p.lua")
        // Eight 3 MB values: three fit in 10 MB; the other five are dropped without a copy.
        for index in 0..<8 {
            let image = EncodedImage(bytes: ImageBytes(copying: [UInt8](repeating: 7, count: 3 << 20)), format: "jpeg")
            tier.store(
                CacheEntry(image: image, storedAt: 0, expiresAt: 1e12),
                for: StageKey(source: "https://a.test/\(index)"),
                at: point)
        }
        #expect(tier.stats.dropped == 5)
        #expect(tier.queuedValueBytes > 9 << 20 && tier.queuedValueBytes <= 10 << 20, "\(tier.queuedValueBytes)")
        // The store answers at last (here: its connections close): the queue empties.
        hung.close()
        await tier.drain()
        #expect(tier.queuedValueBytes == 0)
    }
}
