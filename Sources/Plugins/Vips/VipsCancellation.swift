import CVips
import PipelineHost

/// A libvips kill flag (ph_vips_kill) for one stage run: set by the task's cancellation handler
/// on any thread, read by libvips' worker threads for every region they compute. The handle is
/// never reassigned and the flag is a C11 atomic, hence @unchecked Sendable.
final class VipsKill: @unchecked Sendable {
    let handle: OpaquePointer?
    init() { handle = ph_vips_kill_new() }
    deinit { ph_vips_kill_free(handle) }
    func set() { ph_vips_kill_set(handle) }
    var isSet: Bool { ph_vips_kill_is_set(handle) != 0 }
}

extension VipsPlugin {
    /// How many libvips computations a cancellation stopped in this process; `package` for
    /// this package's tests, which wait for it to move.
    package static var stoppedComputations: Int { stopped.withLock { $0 } }
    static let stopped = Locked(0)
}

extension StageContext {
    /// Runs libvips work off Swift's pool, as `runBlocking` does, and stops its pixel work when
    /// the task is cancelled (nobody waits any more, or serve's request timeout passed): the
    /// memory copy or the save in progress fails within a region, and the stage throws
    /// `.cancelled`, so no request holds a core after its time is up.
    func runVips<T: Sendable>(_ work: @escaping @Sendable () throws(PipelineError) -> T) async throws -> T {
        let kill = VipsKill()
        do {
            return try await withTaskCancellationHandler {
                try await runBlocking { () throws(PipelineError) -> T in
                    ph_vips_kill_attach(kill.handle)
                    defer { ph_vips_kill_attach(nil) }
                    return try work()
                }
            } onCancel: {
                kill.set()
            }
        } catch {
            guard kill.isSet else { throw error }
            VipsPlugin.stopped.withLock { $0 += 1 }
            throw PipelineError.cancelled("stopped: nobody waits for it")
        }
    }
}
