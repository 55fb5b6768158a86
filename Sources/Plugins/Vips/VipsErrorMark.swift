import CVips

/// A place in libvips' error log (ph_vips_errors.c), taken before an operation that may fail:
/// its cause is what libvips logged from here on. Nothing is taken out of the log, so two
/// images failing at the same moment each keep their own cause.
struct VipsErrorMark {
    private let number = ph_vips_error_mark()

    /// What libvips logged since the mark, on one line.
    var messages: String {
        guard let text = ph_vips_errors_since(number) else { return "unknown libvips error" }
        defer { ph_vips_free(text) }
        return String(cString: text).split(whereSeparator: \.isNewline).joined(separator: "; ")
    }
}
