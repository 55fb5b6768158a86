/// One redaction for every sink: the built-in secret names (`Redactor`) and the names a profile
/// set declares secret (normalize's `drop_query` and `redact_query`, `subsonic_auth`'s
/// parameters: every key stage's `secretQueryNames`, in any profile of the set). Logs, spans,
/// errors, JSON and result lines all show a source through it, so a name one profile calls
/// secret is hidden from the first line a request writes, before any stage has run.
public struct Redaction: Sendable, Hashable {
    /// The names besides the built-in ones.
    public let names: Set<String>

    /// The built-in names, and `names`.
    public init(names: Set<String> = []) {
        self.names = names
    }

    /// `location` with its credentials and every secret parameter's value masked, and control
    /// characters escaped (`Redactor.redact`).
    public func callAsFunction(_ location: String) -> String {
        Redactor.redact(location, extraNames: names)
    }
}
