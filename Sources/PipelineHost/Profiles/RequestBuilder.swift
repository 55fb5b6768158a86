/// The values a request chooses for its profile's stage parameters, by stage name, then
/// parameter name: what URL options, `--param` and client hints chose (`Profile.resolve`).
public typealias StageChoices = [String: [String: ParameterValue]]

/// A request as every host builds it, with the request headers that chose it.
public struct BuiltRequest: Sendable, Equatable {
    /// What the pipeline runs.
    public let request: ImageRequest
    /// For `Vary`: Accept when it chose the format, then the client hints an option read.
    public let vary: [String]
}

extension ProfileSet {
    /// The one way a host turns a profile, a source and a request's choices into an
    /// `ImageRequest`: run, info, and serve's image, info and prefetch routes all call it.
    ///
    /// Precedence, later winning: the profile's own values; the format negotiated from
    /// `accept` (what a viewer sending that Accept header takes: avif, webp, else jpeg, also
    /// without a header; for an animation webp, else gif), for each stage whose format is
    /// "auto" after the choices; the choices.
    /// So an option that sets the format wins over Accept, and a profile whose format is
    /// fixed never varies by it. `hints` are the headers the choices' client hints read.
    public func request(
        source: String, profile name: String, choices: StageChoices = [:], hints: [String] = [],
        accept: String? = nil, canWriteAVIF: Bool = false
    ) -> BuiltRequest {
        var overrides = choices
        var negotiated = false
        for stage in self[name]?.stages ?? [] {
            let chosen = { (parameter: String) in choices[stage.name]?[parameter] ?? stage.parameters[parameter] }
            let capabilities = stage.definition.capabilities
            let formatIsAuto = capabilities.formatParameter.map { chosen($0) == .string("auto") } ?? false
            if formatIsAuto, let parameter = capabilities.formatParameter {
                overrides[stage.name, default: [:]][parameter] = .string(
                    FormatChoice.choose(accept: accept, canWriteAVIF: canWriteAVIF))
                negotiated = true
            }
            // An animation's format follows the viewer when written "auto", or when left out
            // while the still format does.
            if case .writesFrames(let parameter, _)? = capabilities.animation,
                chosen(parameter) == .string("auto") || (chosen(parameter) == nil && formatIsAuto)
            {
                overrides[stage.name, default: [:]][parameter] = .string(FormatChoice.chooseAnimated(accept: accept))
                negotiated = true
            }
        }
        return BuiltRequest(
            request: ImageRequest(source: source, profile: name, overrides: overrides),
            vary: (negotiated ? ["Accept"] : []) + hints)
    }

    /// The request for what `info` and `/info` describe: the info chain of profile `name`,
    /// with the choices its stages (those up to decode) take; nothing varies by a header.
    public func infoRequest(source: String, profile name: String, choices: StageChoices = [:]) -> ImageRequest {
        let chain = Self.infoName(name)
        return ImageRequest(source: source, profile: chain, overrides: applicable(choices, to: chain))
    }
}
