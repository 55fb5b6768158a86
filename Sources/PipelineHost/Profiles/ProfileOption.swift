/// One option a profile lets a request choose: `params { w = { 100, 300, 600, default = 300 } }`
/// and `downsample { size = param "w" }`. The allowed values are fixed when the profile loads,
/// and each was checked there against every stage parameter the option sets, so a request can
/// only pick a variant the profile already accepted.
public struct ProfileOption: Sendable {
    /// A stage parameter the option sets.
    public struct Use: Sendable, Hashable {
        /// The stage's name (a profile may use an option only in a stage whose name it has once).
        public let stage: String
        /// The parameter's name.
        public let parameter: String

        package init(stage: String, parameter: String) {
            self.stage = stage
            self.parameter = parameter
        }
    }

    /// A request header an option may take its value from when the request does not choose it.
    public enum Hint: String, Sendable, CaseIterable {
        /// `Width` or `Sec-CH-Width`: the image's width in physical pixels.
        case width = "Width"
        /// `DPR` or `Sec-CH-DPR`: the device pixel ratio.
        case dpr = "DPR"

        /// The header names that carry it, the `Sec-CH-` form first.
        public var headers: [String] { ["Sec-CH-" + rawValue, rawValue] }
    }

    /// The option's name, as URLs and `--param` write it.
    public let name: String
    /// The allowed values, in the order the profile lists them: integers, numbers or strings.
    public let values: [ParameterValue]
    /// The value a request that does not choose gets.
    public let defaultValue: ParameterValue
    /// The header the value comes from when the request does not choose one, rounded up to the
    /// nearest allowed value (numeric options only).
    public let hint: Hint?
    /// Where the value goes.
    public let uses: [Use]

    /// An option; `values` must hold `defaultValue`.
    package init(name: String, values: [ParameterValue], defaultValue: ParameterValue, hint: Hint?, uses: [Use]) {
        self.name = name
        self.values = values
        self.defaultValue = defaultValue
        self.hint = hint
        self.uses = uses
    }

    /// The one way a value is written in a URL or on the command line: `300`, `1.5`, `webp`.
    public static func spelling(of value: ParameterValue) -> String {
        if case .string(let text) = value { return text }
        return value.description
    }

    /// The allowed values as written.
    public var spellings: [String] { values.map(Self.spelling) }

    /// The allowed value written exactly `text`: `w:0300` and `w:3e2` are no spelling of 300.
    public func value(spelled text: Substring) -> ParameterValue? {
        values.first { Self.spelling(of: $0) == text }
    }

    /// The smallest allowed value at least `wanted`, or the largest: how a client hint becomes a
    /// value. Nil for an option of strings.
    public func nearest(atLeast wanted: Double) -> ParameterValue? {
        let numeric = values.compactMap { value -> (ParameterValue, Double)? in
            switch value {
            case .integer(let v): (value, Double(v))
            case .number(let v): (value, v)
            default: nil
            }
        }.sorted { $0.1 < $1.1 }
        return (numeric.first { $0.1 >= wanted } ?? numeric.last)?.0
    }
}

/// Why a request's choice of options is refused: the message names what the option allows.
public struct OptionError: Error, Sendable, CustomStringConvertible {
    /// One line, such as "w:700 is not allowed; w takes 100, 300, 600".
    public let message: String
    /// The message.
    public var description: String { message }
    init(_ message: String) { self.message = message }
}

extension Profile {
    /// How many variants the profile can make of one source: the product of its options'
    /// value counts (1 without options); nil when that is more than `Int.max`.
    public var variantCount: Int? {
        options.reduce(1) { count, option in
            count.flatMap { count in
                let (product, overflow) = count.multipliedReportingOverflow(by: option.values.count)
                return overflow ? nil : product
            }
        }
    }

    /// The overrides for a request that chose `choices` (name and value as written, in any
    /// order), with `header` giving a request header's value for options with a client hint.
    /// Every option not chosen takes its hint's value, else its default. Also returns the
    /// headers a hint was read from (for `Vary`).
    public func resolve(_ choices: [(name: Substring, value: Substring)], header: (String) -> String? = { _ in nil })
        throws(OptionError) -> (overrides: StageChoices, hints: [String])
    {
        var chosen: [String: ParameterValue] = [:]
        for (name, text) in choices {
            guard let option = options.first(where: { $0.name == name }) else {
                let known =
                    options.isEmpty
                    ? "profile \"\(self.name)\" takes no options"
                    : "profile \"\(self.name)\" takes " + options.map(\.name).joined(separator: ", ")
                throw OptionError("unknown option \"\(Redactor.escapingControls(String(name)))\"; \(known)")
            }
            guard chosen[option.name] == nil else { throw OptionError("option \(option.name) is given twice") }
            guard let value = option.value(spelled: text) else {
                throw OptionError(
                    "\(option.name):\(Redactor.escapingControls(String(text.prefix(40)))) is not allowed; "
                        + "\(option.name) takes \(option.spellings.joined(separator: ", "))")
            }
            chosen[option.name] = value
        }
        var overrides: StageChoices = [:]
        var hints: [String] = []
        for option in options {
            var value = chosen[option.name]
            if value == nil, let hint = option.hint {
                hints += hint.headers
                let sent = hint.headers.lazy.compactMap(header).first.flatMap { Double($0.trimmedSpaces) }
                if let sent, sent.isFinite, sent > 0 { value = option.nearest(atLeast: sent) }
            }
            guard let value, value != option.defaultValue else { continue }
            for use in option.uses { overrides[use.stage, default: [:]][use.parameter] = value }
        }
        return (overrides, hints)
    }
}

extension String {
    /// Without leading and trailing spaces.
    fileprivate var trimmedSpaces: Substring {
        var text = Substring(self)
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
