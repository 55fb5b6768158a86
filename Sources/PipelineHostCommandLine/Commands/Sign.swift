import ArgumentParser
import PipelineHost
import PipelineHostServe

struct Sign: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print the signed serve path of a profile and a source.",
        usage: """
            pipelinehost sign <profile> <source> [--file <profile-file>] [<options>]
              pipelinehost sign --purge <source>
            """,
        discussion: """
            Signs with the first pair of PIPELINEHOST_KEY and PIPELINEHOST_SALT, as serve \
            checks it. Append the printed path to the service's address:

              path=$(pipelinehost sign thumbnail https://a.test/a.jpg --file my.lua)
              curl -o cover.jpg "http://127.0.0.1:8080$path"

            With --param w=600, the path carries the option segment /w:600/ after the \
            profile, and the signature covers it: a changed option is a bad signature.

            sign only signs what serve reads back as the same profile, options and source: \
            a profile name or an option outside serve's grammar (letters, digits, '.', '_', \
            '-') is a usage error, exit 2. With --file, the profile must be one of the \
            file's and each option one its params allow, exactly as serve checks them; give \
            it whenever the profile or an option comes from someone else's choice.

            With --purge, it prints the path of serve's POST /purge for the source, which \
            drops the source's entries from every cache on every node:

              curl -X POST "http://127.0.0.1:8080$(pipelinehost sign --purge https://a.test/a.jpg)"
            """)

    @Argument(help: "A profile name of the file serve runs.")
    var profile: String?

    @Argument(help: "The source URL.")
    var source: String?

    @Option(name: .long, help: ArgumentHelp("Sign serve's purge path for this source instead.", valueName: "source"))
    var purge: String?

    @Flag(name: .long, help: "Write the source percent-encoded after /plain/ instead of in base64url.")
    var plain = false

    @Option(
        name: .customLong("param"),
        help: ArgumentHelp(
            "An option of the profile's params, as a name:value segment of the path (w=600). Repeat for several.",
            valueName: "name=value"))
    var params: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The profile file serve runs: the profile must be one of its own, and each --param a value its params allow.",
            valueName: "profile-file"))
    var file: String?

    func validate() throws {
        if purge != nil {
            guard profile == nil, params.isEmpty, file == nil, !plain else {
                throw ValidationError("--purge takes only the source: sign --purge <source>")
            }
        } else if profile == nil || source == nil {
            throw ValidationError("name a profile and a source (sign <profile> <source>), or --purge <source>")
        }
    }

    func run() async throws {
        let signer = try SigningKeys.fromEnvironment()
        if let purge { return try signPurge(purge, signer: signer) }
        guard let profile, let source else { return }
        let options = try ParamOption.choices(params).map { (String($0.name), String($0.value)) }
        if let file { try await checkAgainst(file, profile: profile, options: options) }
        let path: String?
        do {
            path = try ServePath.signed(
                profile: profile, source: source, plain: plain, options: options, signer: signer)
        } catch {
            throw usageError("not signed: \(error)")
        }
        guard let path else {
            throw usageError(
                "no signing key: set PIPELINEHOST_KEY and PIPELINEHOST_SALT (hex), or use /unsafe/ with serve --allow-unsigned"
            )
        }
        printOutput(path)
    }

    private func signPurge(_ source: String, signer: URLSigner) throws {
        let path: String?
        do {
            path = try PurgePath.signed(source: source, signer: signer)
        } catch {
            throw usageError("not signed: \(error)")
        }
        guard let path else {
            throw usageError("no signing key: a purge path needs PIPELINEHOST_KEY and PIPELINEHOST_SALT (hex)")
        }
        printOutput(path)
    }

    /// The profile is one serve would answer for, and the options resolve as serve resolves them.
    private func checkAgainst(_ file: String, profile: String, options: [(String, String)]) async throws {
        let set = try await BlockingExecutor.shared.run { try loadProfiles(file) }
        guard set.defines(profile), let named = set[profile] else {
            throw usageError(
                "not signed: \(file) has no profile \"\(Redactor.escapingControls(profile))\" (it has \(set.names.joined(separator: ", ")))"
            )
        }
        do {
            _ = try named.resolve(options.map { (Substring($0.0), Substring($0.1)) })
        } catch {
            throw usageError("not signed: \(error.message)")
        }
    }
}
