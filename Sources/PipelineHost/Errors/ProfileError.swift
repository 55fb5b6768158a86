/// A mistake in a profile file, found while loading it: always names file:line when a line is
/// known, in the form editors and terminals link to.
public struct ProfileError: Error, Sendable, CustomStringConvertible, Equatable {
    /// The profile file, as it was named.
    public let file: String
    /// The line the mistake is on, when there is one.
    public let line: Int?
    /// What is wrong, written for the profile's author.
    public let message: String

    /// The longest message kept, in bytes: a message may quote what the profile wrote (a Lua
    /// error's text, an unknown name), and one line in a log must stay one readable line.
    public static let messageLimit = 500

    /// A mistake in `file` at `line`; a message over `messageLimit` bytes is cut.
    public init(file: String, line: Int?, _ message: String) {
        self.file = file
        self.line = line
        self.message = Self.clipped(message)
    }

    /// `text` cut to `limit` bytes (on a character boundary), saying how much was left out.
    public static func clipped(_ text: String, to limit: Int = messageLimit) -> String {
        guard text.utf8.count > limit else { return text }
        var kept = ""
        for character in text {
            guard kept.utf8.count + character.utf8.count <= limit else { break }
            kept.append(character)
        }
        return kept + "… (\(text.utf8.count - kept.utf8.count) more bytes)"
    }

    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}

/// Thrown by a stage's factory when its parameters do not fit together. The loader adds file
/// and line.
public struct ParameterError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, for the profile's author.
    public let message: String
    /// A mistake that the loader places in its file and line.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
