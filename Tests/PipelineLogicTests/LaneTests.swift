import Testing

@testable import PipelineHost

/// The slot queue's rules on their own: a ticket's grant is a plain number here, where the
/// pipeline's is a continuation.
@Suite("Lane: slots by priority, first come first served, per-host limits")
struct LaneTests {
    typealias TestLane = Lane<Int>

    /// Fills `lane` with `count` running slots on `host`.
    func fill(_ lane: inout TestLane, _ count: Int, host: String? = nil) {
        for _ in 0..<count { _ = lane.tryAcquire(host: host) }
    }

    @Test("free slots are taken at once; past the limit, tickets wait")
    func limit() {
        var lane = TestLane(limit: 2)
        let first = lane.tryAcquire(host: nil)
        let second = lane.tryAcquire(host: nil)
        let third = lane.tryAcquire(host: nil)
        #expect(first && second && !third)
        #expect(lane.running == 2)
    }

    @Test("a released slot goes to the highest priority, then to the earliest of equals")
    func order() {
        var lane = TestLane(limit: 1)
        fill(&lane, 1)
        lane.enqueue(id: 1, priority: .low, host: nil, grant: 1)
        lane.enqueue(id: 2, priority: .normal, host: nil, grant: 2)
        lane.enqueue(id: 3, priority: .high, host: nil, grant: 3)
        lane.enqueue(id: 4, priority: .high, host: nil, grant: 4)
        var granted: [Int] = []
        for _ in 0..<4 { granted += lane.release(host: nil).map(\.grant) }
        #expect(granted == [3, 4, 2, 1])
    }

    @Test("a reprioritized ticket moves down as well as up, keeping its arrival order")
    func reprioritize() {
        var lane = TestLane(limit: 1)
        fill(&lane, 1)
        lane.enqueue(id: 1, priority: .high, host: nil, grant: 1)
        lane.enqueue(id: 2, priority: .normal, host: nil, grant: 2)
        lane.enqueue(id: 3, priority: .normal, host: nil, grant: 3)
        lane.reprioritize(id: 1, to: .normal)
        var granted: [Int] = []
        for _ in 0..<3 { granted += lane.release(host: nil).map(\.grant) }
        #expect(granted == [1, 2, 3], "first come, first served at its new priority")
        lane.enqueue(id: 4, priority: .high, host: nil, grant: 4)
        lane.enqueue(id: 5, priority: .high, host: nil, grant: 5)
        lane.reprioritize(id: 4, to: .low)
        granted = []
        for _ in 0..<2 { granted += lane.release(host: nil).map(\.grant) }
        #expect(granted == [5, 4])
    }

    @Test("a removed ticket is never granted, and removing one that has a slot finds nothing")
    func remove() {
        var lane = TestLane(limit: 1)
        fill(&lane, 1)
        lane.enqueue(id: 1, priority: .normal, host: nil, grant: 1)
        lane.enqueue(id: 2, priority: .normal, host: nil, grant: 2)
        #expect(lane.remove(id: 1)?.grant == 1)
        #expect(lane.release(host: nil).map(\.grant) == [2])
        #expect(lane.remove(id: 2) == nil, "it has its slot")
    }

    @Test("a host at its limit waits while another host's tickets take the free slots")
    func perHost() {
        var lane = TestLane(limit: 4, perHostLimit: 2)
        fill(&lane, 2, host: "slow.example")
        let third = lane.tryAcquire(host: "slow.example")
        #expect(!third, "slow.example has its two")
        lane.enqueue(id: 1, priority: .high, host: "slow.example", grant: 1)
        let other = lane.tryAcquire(host: "fast.example")
        #expect(other, "a slot is free and fast.example has room")
        lane.enqueue(id: 2, priority: .low, host: "fast.example", grant: 2)
        #expect(lane.release(host: "fast.example").map(\.grant) == [2], "the slow host's ticket still cannot run")
        #expect(lane.release(host: "slow.example").map(\.grant) == [1], "now it can")
    }
}
