/// The pools a pipeline's blocking work runs on, one per kind, so a slow transfer never holds a
/// thread that pixel work or file I/O needs.
struct BlockingPools: Sendable {
    let transfers: BlockingExecutor
    let pixels: BlockingExecutor
    let io: BlockingExecutor

    /// The process's pools (`BlockingExecutor.transfers`, `.pixels`, `.shared`), or `one` for all.
    init(_ one: BlockingExecutor?) {
        (transfers, pixels, io) = one.map { ($0, $0, $0) } ?? (.transfers, .pixels, .shared)
    }

    /// Where a stage of `role` runs: a transfer on the transfer pool, CPU stages on the pixel
    /// pool, and the rest (key and cache stages) on the I/O pool.
    func pool(for role: StageRole) -> BlockingExecutor {
        role == .fetch ? transfers : LaneKind(role) == nil ? io : pixels
    }
}
