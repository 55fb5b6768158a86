import ArgumentParser
import PipelineHost

/// `--profile`: the profile named, or the file's only one; anything else is a usage error that
/// lists the names.
enum ProfileChoice {
    static func named(_ name: String?, in set: ProfileSet) throws -> String {
        let available = set.names.map { "\"\($0)\"" }.joined(separator: ", ")
        guard let name else {
            guard set.profiles.count == 1 else {
                throw usageError("\(set.file) defines several profiles (\(available)); choose one with --profile NAME")
            }
            return set.names[0]
        }
        guard set.names.contains(name) else {
            throw usageError("\(set.file) has no profile \"\(name)\"; it defines \(available)")
        }
        return name
    }
}
