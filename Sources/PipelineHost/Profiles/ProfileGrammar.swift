/// The spelling of what a profile file names and a serve URL carries: profile names, option
/// names and option values. The profile loader holds a file to it, serve's URLs can carry only
/// what it allows, and `sign` signs only what it allows, so the three agree by construction.
public enum ProfileGrammar {
    /// Why `name` cannot name a profile, or nil: 1 to 64 letters, digits, '.', '_' and '-',
    /// starting with a letter or digit. Profile names become parts of output file names and URL
    /// paths, where "." and ".." are directories.
    public static func profileNameProblem(_ name: some StringProtocol) -> String? {
        guard let first = name.utf8.first else { return "is empty" }
        guard name.utf8.count <= 64 else { return "is longer than 64 characters" }
        guard name.utf8.allSatisfy(isValueByte) else { return "may use only letters, digits, '.', '_' and '-'" }
        return isNameByte(first) && first != UInt8(ascii: "_") ? nil : "must start with a letter or digit"
    }

    /// Why `name` cannot name an option, or nil: a letter, then letters, digits and '_' (at
    /// most 32 in all).
    public static func optionNameProblem(_ name: some StringProtocol) -> String? {
        guard name.utf8.count <= 32, name.utf8.allSatisfy(isNameByte), name.first?.isLetter == true else {
            return "must start with a letter and use only letters, digits and '_' (at most 32)"
        }
        return nil
    }

    /// Why `text` cannot be an option's string value, or nil: 1 to 64 letters, digits, '.', '_'
    /// and '-'.
    public static func optionStringProblem(_ text: some StringProtocol) -> String? {
        guard !text.isEmpty, text.utf8.count <= 64, text.utf8.allSatisfy(isValueByte) else {
            return "a string value uses only letters, digits, '.', '_' and '-' (at most 64)"
        }
        return nil
    }

    /// Why `text` cannot be an option value as a URL writes it, or nil: a string value, or a
    /// number's spelling (`ProfileOption.spelling`: digits, '.', '-', and 'e+' for large ones).
    public static func optionSpellingProblem(_ text: some StringProtocol) -> String? {
        guard !text.isEmpty, text.utf8.count <= 64, text.utf8.allSatisfy({ isValueByte($0) || $0 == UInt8(ascii: "+") })
        else {
            return "an option value uses only letters, digits, '.', '_', '-' and '+' (at most 64)"
        }
        return nil
    }

    static func isNameByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
    }

    static func isValueByte(_ byte: UInt8) -> Bool {
        isNameByte(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }
}
