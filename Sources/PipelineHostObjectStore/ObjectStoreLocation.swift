import PipelineHostTransfer

/// Where the object-store tier keeps entries: `s3://BUCKET` or `s3://BUCKET/PREFIX`, from
/// `--object-store` or `PIPELINEHOST_OBJECT_STORE`.
public struct ObjectStoreLocation: Sendable, Equatable, CustomStringConvertible {
    public let bucket: String
    /// Without slashes at either end; "" for the bucket's root.
    public let prefix: String

    /// Nil unless `text` is s3://BUCKET[/PREFIX] with a bucket name S3 takes and a prefix of
    /// letters, digits and `._-/` (at most 200), so a key never needs escaping.
    public init?(_ text: String) {
        guard text.hasPrefix("s3://") else { return nil }
        let rest = text.dropFirst(5)
        let bucket = rest.prefix { $0 != "/" }
        var prefix = rest.dropFirst(bucket.count)
        while prefix.hasPrefix("/") { prefix = prefix.dropFirst() }
        while prefix.hasSuffix("/") { prefix = prefix.dropLast() }
        guard S3Source.isBucketName(bucket), prefix.count <= 200,
            prefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-/".contains($0)) }),
            !prefix.contains("//"), !prefix.split(separator: "/").contains(where: { $0 == "." || $0 == ".." })
        else { return nil }
        self.bucket = String(bucket)
        self.prefix = String(prefix)
    }

    public var description: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/\(prefix)") }
}
