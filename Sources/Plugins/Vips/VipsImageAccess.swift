import CVips
import PipelineHost

/// One libvips operation: reads `input`, sets `output` to a new image, returns 0 on success.
public typealias VipsOperation =
    @Sendable (
        _ input: UnsafeMutablePointer<VipsImage>,
        _ output: inout UnsafeMutablePointer<VipsImage>?
    ) -> Int32

extension StageValue {
    /// For image plugins: applies a libvips operation to the image this value holds and gives
    /// the result as the next value.
    ///
    /// The image arrives upright and in sRGB. The operation runs off Swift's thread pool, its
    /// result is computed into memory (the pipeline may hand it to several stages at once), and
    /// libvips' error text becomes a `PipelineError` naming `stage`.
    public func applyingVips(_ stage: String, in context: StageContext, _ operation: @escaping VipsOperation)
        async throws -> StageValue
    {
        let image = try vipsImage(for: stage)
        return try await context.runVips { () throws(PipelineError) -> StageValue in
            let result = try image.prepared().derive(stage, as: .stageFailed, operation)
            return .image(image.derived(try image.materialized(stage, result)))
        }
    }
}
