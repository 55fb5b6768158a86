import CVips
import PipelineHost

/// Starts libvips once per process and turns its error buffer into messages.
enum VipsRuntime {
    /// libvips is started on first use: operation cache off (the pipeline caches results itself),
    /// untrusted loaders blocked, default concurrency.
    private static let startError: String? = {
        ph_vips_init("pipelinehost", 0) == 0 ? nil : takeError()
    }()

    static func start() throws(PipelineError) {
        if let startError { throw PipelineError(.stageFailed, "libvips failed to start: \(startError)") }
    }

    /// libvips' pending error text on one line, clearing it.
    static func takeError() -> String {
        guard let text = ph_vips_take_error() else { return "unknown libvips error" }
        defer { ph_vips_free(text) }
        return String(cString: text).split(whereSeparator: \.isNewline).joined(separator: "; ")
    }
}
