/// Counters a plugin keeps for the whole process, such as a decoder's: read whenever stats are
/// taken, so `--stats` and `/metrics` show them beside the pipeline's own counters.
///
/// A plugin registers each once (registering a name again replaces it); the count must only
/// grow, as a Prometheus counter does.
public enum ProcessCounters {
    /// One counter: its snake_case name (`/metrics` exports it as `pipelinehost_<name>_total`),
    /// what it counts, and how to read it.
    public struct Counter: Sendable {
        /// snake_case, as `--stats` prints it.
        public let name: String
        /// What it counts: /metrics' HELP line.
        public let help: String
        /// Its value now.
        public let read: @Sendable () -> Int

        /// A counter named `name` that `read` reads.
        public init(_ name: String, help: String, read: @escaping @Sendable () -> Int) {
            self.name = name
            self.help = help
            self.read = read
        }
    }

    private static let registered = Locked([Counter]())

    /// Adds a counter, or replaces the one of that name.
    public static func register(_ counter: Counter) {
        registered.withLock { counters in
            counters.removeAll { $0.name == counter.name }
            counters.append(counter)
        }
    }

    /// Every registered counter with its value now, in the order they were registered.
    public static func snapshot() -> [(counter: Counter, value: Int)] {
        registered.withLock { $0 }.map { ($0, $0.read()) }
    }
}
