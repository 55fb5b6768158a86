import ArgumentParser

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sources from --input-list: one per line, from a file or standard input (-). Blank lines and
/// lines starting with # are skipped.
enum InputList {
    static func read(_ path: String?) throws -> [String] {
        guard let path else { return [] }
        var lines: [String] = []
        if path == "-" {
            while let line = readLine() { lines.append(line) }
        } else {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw usageError("cannot read the input list \(path)")
            }
            lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).map(String.init)
        }
        return lines.map(trimmed).filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    private static func trimmed(_ line: String) -> String {
        String(line.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
