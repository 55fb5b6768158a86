import PipelineHost
import Testing

@testable import PipelineHostServe

/// The service's one deadline keeper: a budget that passes expires once; one that finishes in
/// time is gone. Waits on the expiry itself, never on a clock.
@Suite("serve: request deadlines, kept by one task")
struct RequestDeadlineTests {
    @Test("a passed budget expires, once, and the keeper starts again for the next one")
    func expires() async {
        let deadlines = RequestDeadlines()
        let calls = Locked(0)
        for round in 1...2 {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                _ = deadlines.start(.milliseconds(1)) {
                    calls.withLock { $0 += 1 }
                    done.resume()
                }
            }
            #expect(calls.withLock { $0 } == round)
            #expect(deadlines.count == 0)
        }
    }

    @Test("a finished budget is forgotten; the others stay")
    func finishes() {
        let deadlines = RequestDeadlines()
        let first = deadlines.start(.seconds(600)) { Issue.record("expired") }
        let second = deadlines.start(.seconds(600)) { Issue.record("expired") }
        #expect(deadlines.count == 2)
        deadlines.finish(first)
        #expect(deadlines.count == 1)
        deadlines.finish(second)
        #expect(deadlines.count == 0)
    }
}
