/// A mistake in a profile file, found while loading it: always names file:line when a line is
/// known, in the form editors and terminals link to.
public struct ProfileError: Error, Sendable, CustomStringConvertible, Equatable {
    public let file: String
    public let line: Int?
    public let message: String

    public init(file: String, line: Int?, _ message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    public var description: String {
        if let line { return "\(file):\(line): \(message)" }
        return "\(file): \(message)"
    }
}

/// Thrown by a stage's factory when its parameters do not fit together. The loader adds file
/// and line.
public struct ParameterError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
