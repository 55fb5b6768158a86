@testable import PipelineHost
import PipelineTesting
import Testing

/// The in-flight table's rules on their own: no task, no libvips, no curl. A waiter here is a
/// plain number; the owner (the Pipeline actor) resumes continuations instead.
@Suite("InFlightTable: start, join, leave, finish, raise, hold")
struct InFlightTableTests {
    typealias Table = InFlightTable<String, Int, String, String>

    @Test("the first claim starts work, the next ones join it, and finishing answers them all")
    func joinAndFinish() {
        var table = Table()
        guard case .start(let work) = table.claim("a", priority: .normal) else { Issue.record("did not start"); return }
        let waiting = table.wait("a", work: work, waiter: 1, 1)
        #expect(waiting)
        let second = table.claim("a", priority: .normal)
        #expect(second == .join(work: work, raised: []))
        let alsoWaiting = table.wait("a", work: work, waiter: 2, 2)
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
        guard case .start(let work) = table.claim("a", priority: .normal) else { return }
        _ = table.wait("a", work: work, waiter: 1, 1)
        _ = table.claim("a", priority: .normal)
        _ = table.wait("a", work: work, waiter: 2, 2)
        table.setHandle("a", work: work) { $0 = "task-a" }
        let first = table.leave("a", work: work, waiter: 1)
        #expect(first.waiter == 1 && !first.cancelsWork)
        let again = table.leave("a", work: work, waiter: 1)
        #expect(again.waiter == nil && !again.cancelsWork, "a waiter is answered once")
        let last = table.leave("a", work: work, waiter: 2)
        #expect(last.waiter == 2 && last.cancelsWork && last.cancel == "task-a")
        #expect(table.count == 0)
        let late = table.finish("a", work: work)
        #expect(late == nil, "cancelled work's late result reaches nobody")
        guard case .start(let fresh) = table.claim("a", priority: .normal) else { Issue.record("nothing was kept"); return }
        #expect(fresh != work)
    }

    @Test("work others elsewhere may wait for outlives its last waiter here until abandoned")
    func orphaned() {
        var table = Table()
        guard case .start(let work) = table.claim("a", priority: .normal) else { return }
        _ = table.wait("a", work: work, waiter: 1, 1)
        table.setHandle("a", work: work) { $0 = "task-a" }
        table.shareWithOthers("a", work: work)
        let last = table.leave("a", work: work, waiter: 1)
        #expect(last.waiter == 1 && !last.cancelsWork && last.orphaned)
        #expect(table.isOrphaned("a", work: work) && table.count == 1, "it stays, joinable")
        // A waiter coming back keeps it: abandoning it then does nothing.
        #expect(table.claim("a", priority: .normal) == .join(work: work, raised: []))
        _ = table.wait("a", work: work, waiter: 2, 2)
        #expect(table.abandon("a", work: work) == nil && !table.isOrphaned("a", work: work))
        _ = table.leave("a", work: work, waiter: 2)
        #expect(table.abandon("a", work: work) == "task-a" && table.count == 0, "nobody anywhere: cancel it")
        #expect(table.abandon("a", work: work) == nil, "once")
    }

    @Test("a higher-priority waiter raises the work and the steps it waits for")
    func raise() {
        var table = Table()
        guard case .start(let fetch) = table.claim("fetch", priority: .low),
              case .start(let decode) = table.claim("decode", priority: .low) else { return }
        table.setParent("decode", work: decode, "fetch")
        let raisedHigh = table.claim("decode", priority: .high)
        #expect(raisedHigh == .join(work: decode, raised: ["decode", "fetch"]))
        #expect(table.priority("fetch", work: fetch) == .high)
        let notLowered = table.claim("decode", priority: .normal)
        #expect(notLowered == .join(work: decode, raised: []), "never lowered")
    }

    @Test("a held value answers claims until it is released")
    func hold() {
        var table = Table()
        guard case .start(let work) = table.claim("a", priority: .normal) else { return }
        _ = table.wait("a", work: work, waiter: 1, 1)
        let answered = table.finish("a", work: work, hold: "original")
        #expect(answered == [1])
        let claimed = table.claim("a", priority: .normal)
        #expect(claimed == .held)
        #expect(table.heldValue("a") == "original")
        table.release(["a"])
        if case .start = table.claim("a", priority: .normal) {} else { Issue.record("released value still held") }
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
        var work: [String: (id: Int, waiters: Set<Int>, priority: Priority)] = [:]
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
                    let registered = table.wait(key, work: id, waiter: nextWaiter, nextWaiter)
                    #expect(registered)
                    model.work[key] = (id, [nextWaiter], priority)
                    model.waiting.insert(nextWaiter)
                case .join(let id, let raised):
                    #expect(model.work[key]?.id == id)
                    #expect(raised == (priority > model.work[key]!.priority ? [key] : []))
                    model.work[key]!.priority = max(priority, model.work[key]!.priority)
                    let registered = table.wait(key, work: id, waiter: nextWaiter, nextWaiter)
                    #expect(registered)
                    model.work[key]!.waiters.insert(nextWaiter)
                    model.waiting.insert(nextWaiter)
                }
            case 2:  // some waiter of the key's work leaves
                guard let work = model.work[key], let waiter = work.waiters.randomElement(using: &random) else { break }
                let departure = table.leave(key, work: work.id, waiter: waiter)
                #expect(departure.waiter == waiter)
                #expect(!model.answered.contains(waiter))
                model.answered.insert(waiter)
                model.waiting.remove(waiter)
                model.work[key]!.waiters.remove(waiter)
                #expect(departure.cancelsWork == model.work[key]!.waiters.isEmpty)
                if model.work[key]!.waiters.isEmpty { model.work[key] = nil }
            case 3:  // the key's work finishes, sometimes holding its value
                guard let work = model.work[key] else {
                    let nobody = table.finish(key, work: 999_999)
                    #expect(nobody == nil)
                    break
                }
                let hold = random.next(2) == 0
                let answered = table.finish(key, work: work.id, hold: hold ? "v" : nil)
                #expect(Set(answered ?? []) == work.waiters)
                #expect(model.answered.isDisjoint(with: work.waiters))
                model.answered.formUnion(work.waiters)
                model.waiting.subtract(work.waiters)
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
                #expect(Set(table.running[key]!.waiters.keys) == work.waiters)
                #expect(!work.waiters.isEmpty, "no work runs with nobody waiting")
                #expect(table.priority(key, work: work.id) == work.priority)
            }
            #expect(Set(table.held.keys) == model.held)
            #expect(model.answered.isDisjoint(with: model.waiting))
            #expect(model.answered.count + model.waiting.count + model.heldAnswers == nextWaiter, "every claim is answered once")
        }
    }
}
