import PipelineHost

/// The checks an image path passes before any pipeline work, for a GET and for each path of a
/// /prefetch list alike, so the two cannot drift: the shape, the signature, then the profile and
/// the source. The order tells an unsigned caller nothing about profiles or sources.
struct ImageResolver: Sendable {
    let settings: ServeSettings

    /// An image path resolved: the path, what its options (and client hints) choose, and the
    /// request headers a hint read, for `Vary`.
    struct Resolved {
        let image: ImagePath
        let choices: StageChoices
        let hints: [String]
    }

    /// The image a path asks for, with the profiles that serve it; `query` is what followed a
    /// "?" (nothing signs it, so any query is refused). `header` gives a request header, for
    /// options with a client hint (none for a prefetch).
    func resolve(
        path: Substring, query: Substring?, profiles: ServedProfiles,
        header: (String) -> String? = { _ in nil }
    ) throws(ServeFailure) -> Resolved {
        guard query == nil else {
            throw .forbidden("a query string is not covered by the signature; percent-encode \"?\" in plain sources")
        }
        guard let (signature, signed) = ImagePath.split(path) else {
            throw .notFound("not an image path: use /{signature}/{profile}/{base64url source} or .../plain/{source}")
        }
        if signature == "unsafe" {
            guard settings.allowUnsigned else {
                throw .forbidden("unsigned paths are refused: the service runs without --allow-unsigned")
            }
        } else if !settings.signer.accepts(signature, for: signed) {
            throw .forbidden("bad signature")
        }
        let image: ImagePath
        do {
            image = try ImagePath(signature: signature, signed: signed)
        } catch .badOption(let why) {
            throw ServeFailure(.badRequest, "invalid_option", why)
        } catch {
            throw .notFound(error.message)
        }
        guard profiles.set.defines(image.profile), let profile = profiles.set[image.profile] else {
            throw .notFound("no profile named \"\(Redactor.escapingControls(image.profile))\"")
        }
        let chosen: (overrides: StageChoices, hints: [String])
        do {
            chosen = try profile.resolve(image.options.map { ($0.name, $0.value) }, header: header)
        } catch {
            throw ServeFailure(.badRequest, "invalid_option", error.message)
        }
        try SourcePolicy.check(
            image.source, allowedHosts: settings.allowedSourceHosts, redaction: profiles.set.redaction)
        return Resolved(image: image, choices: chosen.overrides, hints: chosen.hints)
    }
}
