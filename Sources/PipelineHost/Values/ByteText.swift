/// Byte counts as people read them, in powers of 1024: "512 B", "12.5 KB", "236.0 MB", "1.5 GB".
/// One writer for every message, line and flag default.
public enum ByteText {
    /// `count` bytes in the largest unit that keeps the number at 1 or more.
    public static func bytes(_ count: Int) -> String {
        let value = Double(count)
        if count < 1024 { return "\(count) B" }
        if count < 1 << 20 { return tenths(value / 1024) + " KB" }
        if count < 1 << 30 { return tenths(value / Double(1 << 20)) + " MB" }
        return tenths(value / Double(1 << 30)) + " GB"
    }

    /// One decimal place, without Foundation's locale-dependent formatting.
    public static func tenths(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
