import PipelineTesting
import Testing

@testable import PipelineHost

/// The in-flight table's rules on their own: no task, no libvips, no curl. A waiter here is a
/// plain number; the owner (the Pipeline actor) resumes continuations instead.
@Suite("InFlightTable: start, join, leave, finish, raise, hold")
struct InFlightTableTests {
    typealias Table = InFlightTable<String, Int, String, String, String>

    @Test("the first claim starts work, the next ones join it, and finishing answers them all")
    func joinAndFinish() {
        var table = Table()
        guard case .start(let work) = table.claim("a", priority: .normal) else { Issue.record("did not start"); return }
        let waiting = table.wait("a", work: work, waiter: 1, priority: .normal, 1)
        #expect(waiting)
        let second = table.claim("a", priority: .normal)
        #expect(second == .join(work: work, raised: []))
        let alsoWaiting = table.wait("a", work: work, waiter: 2, priority: .normal, 2)
        #expect(alsoWaiting)
        let answered = table.finish("a", work: work)
        #expect(answered?.sorted() == [1, 2])
        #expect(table.count == 0)
        let again = table.finish("a", work: work)
        #expect(again == nil, "finishing twice answers nobody")
    }

    @Test("one waiter leaving keeps the work for the others; the last one cancels it")
    func leave() {
        var table = Table()
        guard case .start(let work) = table.claim("a", priority: .normal) else {
            Issue.record("a first claim did not start work"); return
        }
        _ = table.wait("a", work: work, waiter: 1, priority: .normal, 1)
        _ = table.claim("a", priority: .normal)
        _ = table.wait("a", work: work, waiter: 2, priority: .normal, 2)
        table.setHandle("a", work: work) { $0 = "task-a" }
        let first = table.leave("a", work: work, waiter: 1)
        #expect(first == .othersWait(1, lowered: []))
        let again = table.leave("a", work: work, waiter: 1)
        #expect(again == .answered, "a waiter is answered once")
        let last = table.leave("a", work: work, waiter: 2)
        #expect(last == .cancel(2, "task-a"))
        #expect(table.count == 0)
        let late = table.finish("a", work: work)
        #expect(late == nil, "cancelled work's late result reaches nobody")
        guard case .start(let fresh) = table.claim("a", priority: .normal) else {
            Issue.record("nothing was kept"); return
        }
        #expect(fresh != work)
    }

    @Test("a purge detaches a source's work: it answers its own waiters, and a new claim starts anew")
    func detach() {
        var table = Table()
        guard case .start(let fetch) = table.claim("s1|fetch", priority: .normal),
            case .start(let decode) = table.claim("s1|decode", priority: .high),
            case .start(let other) = table.claim("s2|fetch", priority: .normal),
            case .start(let encode) = table.claim("s1|encode", priority: .normal)
        else { Issue.record("first claims did not start work"); return }
        _ = table.wait("s1|decode", work: decode, waiter: 1, priority: .high, 1)
        _ = table.wait("s1|decode", work: decode, waiter: 2, priority: .low, 2)
        _ = table.wait("s1|fetch", work: fetch, waiter: 3, priority: .high, 3, inputOf: ("s1|decode", decode))
        _ = table.wait("s2|fetch", work: other, waiter: 4, priority: .normal, 4)
        table.setHandle("s1|decode", work: decode) { $0 = "task-decode" }
        table.lead("s1|decode", work: decode, lease: "lease-decode")
        _ = table.finish("s1|encode", work: encode, hold: "stale")
        #expect(table.claim("s1|encode", priority: .normal) == .held)

        #expect(table.detach { $0.hasPrefix("s1|") } == 2)
        #expect(table.count == 3, "detached work still runs")
        guard case .start(let fresh) = table.claim("s1|decode", priority: .normal) else {
            Issue.record("a claim after the purge joined detached work"); return
        }
        #expect(fresh != decode)
        #expect(table.heldValue("s1|encode") == nil, "a value held for its request is dropped")
        #expect(table.claim("s2|fetch", priority: .normal) == .join(work: other, raised: []), "other sources stay")

        // Its waiters leave and are answered as before; the fall of priority reaches its input,
        // but moves no lane ticket under a key that now names the fresh work.
        #expect(table.leave("s1|decode", work: decode, waiter: 1) == .othersWait(1, lowered: []))
        #expect(table.priority("s1|decode", work: decode) == .low)
        #expect(table.priority("s1|fetch", work: fetch) == .low)
        // Its last waiter leaving cancels it, lease or not: nobody elsewhere wants it either.
        #expect(table.leave("s1|decode", work: decode, waiter: 2) == .cancel(2, "task-decode"))
        #expect(table.finish("s1|fetch", work: fetch, hold: "old bytes") == [3])
        #expect(table.heldValue("s1|fetch") == nil, "detached work's value is never held for joiners")
        #expect(table.count == 2 && table.priority("s1|decode", work: fresh) == .normal)
    }

    @Test("work others elsewhere may wait for outlives its last waiter here until abandoned")
    func orphaned() {
        var table = Table()
        guard case .start(let work) = table.claim("a", priority: .normal) else {
            Issue.record("a first claim did not start work"); return
        }
        _ = table.wait("a", work: work, waiter: 1, priority: .normal, 1)
        table.setHandle("a", work: work) { $0 = "task-a" }
        table.lead("a", work: work, lease: "lease-a")
        let last = table.leave("a", work: work, waiter: 1)
        #expect(last == .orphaned(1, "lease-a"))
        #expect(table.isOrphaned("a", work: work) && table.count == 1, "it stays, joinable")
        // A waiter coming back keeps it: abandoning it then does nothing.
        #expect(table.claim("a", priority: .normal) == .join(work: work, raised: []))
        _ = table.wait("a", work: work, waiter: 2, priority: .normal, 2)
        #expect(table.abandon("a", work: work) == nil && !table.isOrphaned("a", work: work))
        _ = table.leave("a", work: work, waiter: 2)
        #expect(table.abandon("a", work: work) == "task-a" && table.count == 0, "nobody anywhere: cancel it")
        #expect(table.abandon("a", work: work) == nil, "once")
    }

    @Test("a higher-priority waiter raises the work and the steps it waits for")
    func raise() {
        var table = Table()
        guard case .start(let fetch) = table.claim("fetch", priority: .low),
            case .start(let decode) = table.claim("decode", priority: .low)
        else { Issue.record("a first claim did not start work"); return }
        _ = table.wait("fetch", work: fetch, waiter: 1, priority: .low, 1, inputOf: ("decode", decode))
        let raisedHigh = table.claim("decode", priority: .high)
        #expect(raisedHigh == .join(work: decode, raised: ["decode", "fetch"]))
        #expect(table.priority("fetch", work: fetch) == .high)
        let notLowered = table.claim("decode", priority: .normal)
        #expect(notLowered == .join(work: decode, raised: []), "never lowered")
    }

    @Test("a held value answers claims until it is released")
    func hold() {
        var table = Table()
        guard case .start(let work) = table.claim("a", priority: .normal) else {
            Issue.record("a first claim did not start work"); return
        }
        _ = table.wait("a", work: work, waiter: 1, priority: .normal, 1)
        let answered = table.finish("a", work: work, hold: "original")
        #expect(answered == [1])
        let claimed = table.claim("a", priority: .normal)
        #expect(claimed == .held)
        #expect(table.heldValue("a") == "original")
        table.release(["a"])
        if case .start = table.claim("a", priority: .normal) {} else { Issue.record("released value still held") }
    }

    @Test("a leaving waiter lowers the work to the highest priority left, and the step it waits for too")
    func lowerOnLeave() {
        var table = Table()
        guard case .start(let decode) = table.claim("decode", priority: .low) else {
            Issue.record("a first claim did not start work"); return
        }
        _ = table.wait("decode", work: decode, waiter: 1, priority: .low, 1)
        guard case .start(let fetch) = table.claim("fetch", priority: .low) else {
            Issue.record("a first claim did not start work"); return
        }
        _ = table.wait("fetch", work: fetch, waiter: 2, priority: .low, 2, inputOf: ("decode", decode))
        // A high-priority request joins the decode: both steps go up.
        #expect(table.claim("decode", priority: .high) == .join(work: decode, raised: ["decode", "fetch"]))
        _ = table.wait("decode", work: decode, waiter: 3, priority: .high, 3)
        // Another request waits for the fetch itself at normal priority.
        _ = table.claim("fetch", priority: .normal)
        _ = table.wait("fetch", work: fetch, waiter: 4, priority: .normal, 4)
        // The high one leaves: the decode falls back to low; the fetch only to normal, its own
        // waiter's priority.
        #expect(table.leave("decode", work: decode, waiter: 3) == .othersWait(3, lowered: ["decode", "fetch"]))
        #expect(table.priority("decode", work: decode) == .low)
        #expect(table.priority("fetch", work: fetch) == .normal)
        // The normal one leaves too: the fetch is back to the decode's low.
        #expect(table.leave("fetch", work: fetch, waiter: 4) == .othersWait(4, lowered: ["fetch"]))
        #expect(table.priority("fetch", work: fetch) == .low)
        // Once the decode has its input, a change of its priority no longer reaches the fetch.
        table.inputArrived("decode", work: decode)
        #expect(table.claim("decode", priority: .high) == .join(work: decode, raised: ["decode"]))
        #expect(table.priority("fetch", work: fetch) == .low)
    }

    /// Thousands of random operation sequences against a model of what must hold after each.
    @Test("random sequences keep every invariant", arguments: 0..<8)
    func randomized(_ seed: Int) async {
        var random = SeededGenerator(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        for _ in 0..<250 {
            runSequence(&random, steps: 60)
            // Give the thread back now and then: the test pool has one thread per core, and
            // other suites' waits run on it too.
            await Task.yield()
        }
    }

    private struct Model {
        var work: [String: (id: Int, waiters: [Int: Priority], priority: Priority)] = [:]
        var held: Set<String> = []
        var answered: Set<Int> = []
        var waiting: Set<Int> = []
        /// Claims a held value answered at once.
        var heldAnswers = 0
    }

    private func runSequence(_ random: inout SeededGenerator, steps: Int) {
        var table = Table()
        var model = Model()
        var nextWaiter = 0
        let keys = ["a", "b", "c"]
        let priorities: [Priority] = [.low, .normal, .high]
        for _ in 0..<steps {
            let key = keys[random.next(keys.count)]
            switch random.next(5) {
            case 0, 1:  // a new waiter claims the key
                nextWaiter += 1
                let priority = priorities[random.next(3)]
                switch table.claim(key, priority: priority) {
                case .held:
                    #expect(model.held.contains(key))
                    model.heldAnswers += 1
                case .start(let id):
                    #expect(model.work[key] == nil && !model.held.contains(key))
                    let registered = table.wait(key, work: id, waiter: nextWaiter, priority: priority, nextWaiter)
                    #expect(registered)
                    model.work[key] = (id, [nextWaiter: priority], priority)
                    model.waiting.insert(nextWaiter)
                case .join(let id, let raised):
                    #expect(model.work[key]?.id == id)
                    #expect(raised == (priority > model.work[key]!.priority ? [key] : []))
                    model.work[key]!.priority = max(priority, model.work[key]!.priority)
                    let registered = table.wait(key, work: id, waiter: nextWaiter, priority: priority, nextWaiter)
                    #expect(registered)
                    model.work[key]!.waiters[nextWaiter] = priority
                    model.waiting.insert(nextWaiter)
                }
            case 2:  // some waiter of the key's work leaves
                guard let work = model.work[key], let waiter = work.waiters.keys.randomElement(using: &random) else {
                    break
                }
                let departure = table.leave(key, work: work.id, waiter: waiter)
                #expect(!model.answered.contains(waiter))
                model.answered.insert(waiter)
                model.waiting.remove(waiter)
                model.work[key]!.waiters[waiter] = nil
                // The work runs on at the highest priority left, or is cancelled with nobody left.
                if let highest = model.work[key]!.waiters.values.max() {
                    let lowered = highest < work.priority ? [key] : []
                    #expect(departure == .othersWait(waiter, lowered: lowered))
                    model.work[key]!.priority = highest
                } else {
                    #expect(departure == .cancel(waiter, nil))
                    model.work[key] = nil
                }
            case 3:  // the key's work finishes, sometimes holding its value
                guard let work = model.work[key] else {
                    let nobody = table.finish(key, work: 999_999)
                    #expect(nobody == nil)
                    break
                }
                let hold = random.next(2) == 0
                let answered = table.finish(key, work: work.id, hold: hold ? "v" : nil)
                #expect(Set(answered ?? []) == Set(work.waiters.keys))
                #expect(model.answered.isDisjoint(with: work.waiters.keys))
                model.answered.formUnion(work.waiters.keys)
                model.waiting.subtract(work.waiters.keys)
                model.work[key] = nil
                if hold { model.held.insert(key) }
            default:  // the request that held the key's value ends
                table.release([key])
                model.held.remove(key)
            }
            // After every step: the table and the model agree.
            #expect(Set(table.running.keys) == Set(model.work.keys))
            for (key, work) in model.work {
                #expect(table.running[key]?.id == work.id)
                #expect(Set(table.running[key]!.waiters.keys) == Set(work.waiters.keys))
                #expect(!work.waiters.isEmpty, "no work runs with nobody waiting")
                #expect(table.priority(key, work: work.id) == work.priority)
            }
            #expect(Set(table.held.keys) == model.held)
            #expect(model.answered.isDisjoint(with: model.waiting))
            #expect(
                model.answered.count + model.waiting.count + model.heldAnswers == nextWaiter,
                "every claim is answered once")
        }
    }
}
