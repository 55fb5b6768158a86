/// How soon a request should run. Queues serve higher priorities first; work shared by several
/// requests runs at the highest priority among them.
public enum Priority: Int, Sendable, Comparable, CaseIterable {
    /// Prefetch: warm things up when nothing else needs the machine.
    case low
    case normal
    /// On screen now.
    case high

    public static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }
}
