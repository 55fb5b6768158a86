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
    ///
    /// `outOfOrder` is for an operation that reads its input in another order than top to
    /// bottom (a quarter turn, a vertical flip): an image decode has only opened is then decoded
    /// into memory first, since its loader reads the file once, top to bottom, and would fail.
    public func applyingVips(
        _ stage: String, in context: StageContext, outOfOrder: Bool = false, _ operation: @escaping VipsOperation
    ) async throws -> StageValue {
        try await applying(stage, in: context, outOfOrder: outOfOrder, keepingRegions: false, operation)
    }

    /// As `applyingVips(_:in:outOfOrder:_:)`, for an operation that leaves every pixel where it
    /// was (a blur of some parts): the result keeps the regions found before it (`regions(for:)`).
    public func applyingVipsInPlace(_ stage: String, in context: StageContext, _ operation: @escaping VipsOperation)
        async throws -> StageValue
    {
        try await applying(stage, in: context, outOfOrder: false, keepingRegions: true, operation)
    }

    private func applying(
        _ stage: String, in context: StageContext, outOfOrder: Bool, keepingRegions: Bool,
        _ operation: @escaping VipsOperation
    ) async throws -> StageValue {
        let image = try vipsImage(for: stage)
        return try await context.runVips { () throws(PipelineError) -> StageValue in
            var input = try image.prepared()
            if outOfOrder, image.undecodedBytes != nil {
                input = try image.materialized(stage, input)
            }
            let result = try image.materialized(stage, try input.derive(stage, as: .stageFailed, operation))
            return .image(image.derived(result, regions: keepingRegions ? image.regions : nil))
        }
    }
}
