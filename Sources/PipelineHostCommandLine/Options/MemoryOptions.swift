import ArgumentParser
import PipelineHost

/// The memory budget flag, for the commands that run images.
struct MemoryOptions: ParsableArguments {
    @Option(
        name: .customLong("memory-budget"),
        help: ArgumentHelp(
            "Most memory transfers' bodies and decodes may hold at once, such as 300M or 4G; work past it waits, "
                + "highest priority first, and an image that could never fit is refused (0: no budget).",
            discussion:
                "Default: half of the memory cgroup's limit (cgroup v2 memory.max, v1 memory.limit_in_bytes; the "
                + "smallest of its group and the groups above it, a container's own inside one), or of "
                + "physical memory outside one. A decode draws its peak predicted from the header (a progressive "
                + "JPEG's coefficient buffer, an interlaced PNG whole) before a pixel is made.",
            valueName: "size"))
    var memoryBudget: ByteCount?

    /// At least 16 MiB, at most the process's own limit: a smaller budget refuses every photo, a
    /// larger one would be no budget at all.
    func validate() throws {
        guard let bytes = memoryBudget?.bytes, bytes != 0 else { return }
        let most = MemoryLimit.detected.bytes
        guard bytes >= 16 << 20, bytes <= most else {
            throw ValidationError(
                "--memory-budget must be between 16M and \(ByteText.bytes(most)) (\(MemoryLimit.detected.origin)), or 0 for none, "
                    + "got \(ByteText.bytes(bytes))")
        }
    }

    /// The budget in bytes, nil for none.
    var bytes: Int? {
        guard let chosen = memoryBudget?.bytes else { return MemoryLimit.defaultBudget }
        return chosen == 0 ? nil : chosen
    }

    /// "memory budget 150.0 MB (half of cgroup v1 memory.limit_in_bytes, 300.0 MB)", for start-up lines.
    var summary: String {
        guard let bytes else { return "no memory budget" }
        let detected = MemoryLimit.detected
        let from =
            memoryBudget == nil
            ? " (half of \(detected.origin), \(ByteText.bytes(detected.bytes)))" : " (--memory-budget)"
        return "memory budget \(ByteText.bytes(bytes))\(from)"
    }
}
