/// What kind of work a stage does. The pipeline uses it to pick the queue a stage waits in
/// (transfers and CPU work have separate limits) and to file its time under the right metric.
public enum StageRole: String, Sendable, CaseIterable {
    /// Rewrites the source or its key (normalize, request signing). Cheap; runs inline.
    case key
    /// Moves bytes over the network or from disk. Waits for a transfer slot.
    case fetch
    /// Turns encoded bytes into pixels. Downsample counts too: shrink-on-load is where the
    /// pixels are actually decoded.
    case decode
    /// Pixel work on a decoded image (blur, masks, overlays).
    case process
    /// Pixels back to encoded bytes.
    case encode
    /// The host's `cache` stage: the pipeline looks up and stores the value before it.
    case cache

    /// The role a stage has unless it says otherwise, from the kinds it takes and gives.
    public static func inferred(input: ValueKind, output: ValueKind) -> StageRole {
        switch (input, output) {
        case (.source, .source): .key
        case (.source, _): .fetch
        case (.encoded, .image): .decode
        case (.image, .encoded): .encode
        default: .process
        }
    }
}
