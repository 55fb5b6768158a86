/// `encode { format = "auto" }`: the best format the client accepts, from its `Accept` header
/// (serve) or `--accept` (run). AVIF first (smallest), then WebP, else JPEG, which every
/// client reads.
public enum FormatChoice {
    /// The format for an `Accept` header; `canWriteAVIF` is whether this libvips writes it.
    public static func choose(accept: String?, canWriteAVIF: Bool) -> String {
        guard let accept else { return "jpeg" }
        var accepted: Set<String> = []
        for item in accept.split(separator: ",") {
            // Media types and parameters hold no spaces, so dropping them all is safe.
            let fields = item.split(separator: ";").map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() }
            guard let type = fields.first, !type.isEmpty else { continue }
            // "q=0" means "not this one".
            let refused = fields.dropFirst().contains { $0.hasPrefix("q=") && Double($0.dropFirst(2)) == 0 }
            if !refused { accepted.insert(type) }
        }
        if canWriteAVIF, accepted.contains("image/avif") { return "avif" }
        if accepted.contains("image/webp") { return "webp" }
        return "jpeg"
    }

    /// Outputs that are text, not an image: the placeholder stage's kinds.
    public static let textFormats: Set<String> = ["thumbhash", "blurhash", "lqip"]

    /// The media type of a format name, for Content-Type.
    public static func mediaType(_ format: String?) -> String {
        switch format {
        case "jpeg": "image/jpeg"
        case "png": "image/png"
        case "webp": "image/webp"
        case "gif": "image/gif"
        case "avif": "image/avif"
        case "jxl": "image/jxl"
        case "json": "application/json"
        case let text? where textFormats.contains(text): "text/plain; charset=utf-8"
        default: "application/octet-stream"
        }
    }
}
