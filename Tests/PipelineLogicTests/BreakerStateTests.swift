import PipelineHost
import Testing

@testable import PipelineHostRedis

/// The shared tier's decisions as values, given the time: no redis-server and no sleeping.
@Suite("Circuit breaker and entry lifetimes, given the time")
struct BreakerStateTests {
    let start = ContinuousClock.now

    @Test("three failures open it; calls fail at once until the cooldown ends; then one probe")
    func opensAndProbes() {
        var breaker = BreakerState(threshold: 3, cooldown: .seconds(1))
        for _ in 0..<2 { breaker.failed(at: start) }
        let afterTwo = breaker.allowsCall(at: start)
        #expect(!breaker.isOpen && afterTwo, "two failures are not three")
        breaker.failed(at: start)
        #expect(breaker.isOpen && breaker.timesOpened == 1)
        let early = breaker.allowsCall(at: start + .milliseconds(999))
        let probe = breaker.allowsCall(at: start + .seconds(1))
        let second = breaker.allowsCall(at: start + .seconds(1))
        #expect(!early)
        #expect(probe, "the cooldown is over: one probe")
        #expect(!second, "only one probe at a time")
    }

    @Test("a failed probe opens it for another cooldown; a successful one closes it")
    func probeOutcome() {
        var breaker = BreakerState(threshold: 1, cooldown: .seconds(2))
        breaker.failed(at: start)
        let probe = breaker.allowsCall(at: start + .seconds(2))
        #expect(probe)
        breaker.failed(at: start + .seconds(2))
        let during = breaker.allowsCall(at: start + .seconds(3))
        #expect(!during, "open again, from the probe's failure")
        #expect(breaker.timesOpened == 1, "still the same opening")
        let next = breaker.allowsCall(at: start + .seconds(4))
        #expect(next)
        breaker.succeeded()
        let closed = breaker.allowsCall(at: start + .seconds(4))
        #expect(!breaker.isOpen && closed)
        breaker.failed(at: start + .seconds(5))
        #expect(breaker.timesOpened == 2)
    }

    @Test("Redis keeps an entry while it is fresh and a day after, and never under a second")
    func lifetimes() {
        let image = EncodedImage(bytes: ImageBytes(copying: [1]))
        let entry = CacheEntry(image: image, storedAt: 1000, expiresAt: 1060)
        #expect(RedisTier.lifetime(of: entry, staleFor: 86_400, at: 1000) == (60 + 86_400) * 1000)
        #expect(RedisTier.lifetime(of: entry, staleFor: 0, at: 1059.5) == 1000, "at least a second")
        #expect(RedisTier.lifetime(of: entry, staleFor: 10, at: 5000) == 1000, "long stale: the floor")
        let forever = CacheEntry(image: image, storedAt: 1000, expiresAt: .infinity)
        #expect(RedisTier.lifetime(of: forever, staleFor: 0, at: 1000) == Int(Int32.max))
    }
}
