/// "Did you mean ...?" for names a person typed.
enum Suggestion {
    /// The closest candidate within two edits, if any.
    static func closest(to word: String, in candidates: some Sequence<String>) -> String? {
        var best: (name: String, distance: Int)?
        // Lengths that differ by more than two cannot be within two edits; checking first keeps a
        // hostile megabyte-long name (a profile's key or value) from costing seconds per candidate.
        let length = word.count
        for candidate in candidates where abs(candidate.count - length) <= 2 {
            let d = distance(Array(word), Array(candidate))
            if d <= 2, d < (best?.distance ?? .max) { best = (candidate, d) }
        }
        return best?.name
    }

    static func hint(for word: String, in candidates: some Sequence<String>) -> String {
        closest(to: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// Levenshtein distance.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            previous = current
        }
        return previous[b.count]
    }
}
