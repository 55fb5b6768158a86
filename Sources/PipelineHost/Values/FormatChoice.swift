/// `encode { format = "auto" }`: the best format the client accepts, from its `Accept` header
/// (serve) or `--accept` (run). AVIF first (smallest), then WebP, else JPEG, which every
/// client reads. An animation is WebP when the client takes it, else GIF (`chooseAnimated`).
public enum FormatChoice {
    /// The format for an `Accept` header; `canWriteAVIF` is whether this libvips writes it.
    public static func choose(accept: String?, canWriteAVIF: Bool) -> String {
        let accepted = mediaTypes(accepted: accept)
        if canWriteAVIF, accepted.contains("image/avif") { return "avif" }
        if accepted.contains("image/webp") { return "webp" }
        return "jpeg"
    }

    /// The format an animation is written in for an `Accept` header: WebP (a third to a tenth
    /// of a GIF's bytes, and full colour) when the client takes it, else GIF, which every client
    /// animates. Never a still: a viewer asking for an animation's URL gets the animation.
    public static func chooseAnimated(accept: String?) -> String {
        mediaTypes(accepted: accept).contains("image/webp") ? "webp" : "gif"
    }

    /// The media types an Accept header takes, lowercased; none without a header.
    static func mediaTypes(accepted accept: String?) -> Set<String> {
        guard let accept else { return [] }
        var accepted: Set<String> = []
        for item in accept.split(separator: ",") {
            // Media types and parameters hold no spaces, so dropping them all is safe.
            let fields = item.split(separator: ";").map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() }
            guard let type = fields.first, !type.isEmpty else { continue }
            // "q=0" means "not this one"; a q outside RFC 9110's grammar ("NaN", "1e0", "-1")
            // makes the item one that cannot be read, and it counts for nothing.
            let weights = fields.dropFirst().filter { $0.hasPrefix("q=") }.map { qvalue($0.dropFirst(2)) }
            guard weights.count <= 1, let weight = weights.first ?? 1, weight > 0 else { continue }
            accepted.insert(type)
        }
        return accepted
    }

    /// A weight as RFC 9110 §12.4.2 writes it: 0 to 1 with at most three decimals, `0.5`, `1.000`;
    /// nil for anything else, which `Double` would read (`nan`, `1e0`, `0x1`, `-0`).
    static func qvalue(_ text: Substring) -> Double? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, whole == "0" || whole == "1" else { return nil }
        let decimals = parts.count == 2 ? parts[1] : ""
        guard decimals.count <= 3, decimals.allSatisfy({ ("0"..."9").contains($0) }),
            whole == "0" || decimals.allSatisfy({ $0 == "0" })
        else {
            return nil
        }
        return Double(text)
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
