import PipelineHost

/// Registers `subsonic_auth`: signs every transfer to a Subsonic server with a fresh salt, while
/// the URL the profile sees (and the key) stays free of credentials.
public enum SubsonicAuthPlugin: PipelinePlugin {
    /// The query parameters the Subsonic API uses for authentication and client identity.
    static let parameterNames: Set<String> = ["u", "t", "s", "p", "v", "c"]

    public static func register(in registry: inout StageRegistry) throws {
        try registry.register(
            StageDefinition(
                name: "subsonic_auth",
                summary: "Sign each transfer with Subsonic auth (u, t = md5(password + salt), s = a fresh salt, v, c). "
                    + "The password comes from an environment variable, never from the profile; the key and output never see it.",
                input: .source, output: .source,
                parameters: SubsonicAuthStage.Keys.specs,
                make: { try SubsonicAuthStage($0) }))
    }
}

struct SubsonicAuthStage: SourceRewriter {
    struct Keys: ParameterList {
        let user = OptionalParameter<String>("user", .string, doc: "the Subsonic user name (required)")
        let passwordEnv = Parameter<String>(
            "password_env", .environmentVariable, default: "PIPELINEHOST_SECRET_SUBSONIC_PASSWORD",
            doc:
                "the environment variable that holds the password: PIPELINEHOST_SECRET_..., or one the operator allows with --allow-env"
        )
        let method = Parameter<SubsonicSigner.Method>(
            "method", default: .token,
            doc: "token: t and s (API 1.13+); plain: p=enc:<hex> for servers without token auth")
        let version = Parameter<String>("version", .string, default: "1.16.1", doc: "the API version sent as v")
        let client = Parameter<String>("client", .string, default: "pipelinehost", doc: "the client name sent as c")
    }

    let user: String
    let passwordVariable: String
    let method: SubsonicSigner.Method
    let version: String
    let client: String

    init(_ p: StageParameters) throws(ParameterError) {
        guard let user = p[\Keys.user], !user.isEmpty else {
            throw ParameterError(
                "needs user, like subsonic_auth { user = \"me\" }; the password comes from $PIPELINEHOST_SECRET_SUBSONIC_PASSWORD"
            )
        }
        self.user = user
        passwordVariable = p[\Keys.passwordEnv]
        method = p[\Keys.method]
        version = p[\Keys.version]
        client = p[\Keys.client]
    }

    func rewrite(_ source: Source) throws -> Source {
        var source = source
        // Read when a request runs, not when the profile loads: `pipelinehost check` works
        // without the secret, and the password is never kept beyond the signer.
        guard let password = EnvironmentAccess.read(passwordVariable) else {
            throw PipelineError(.profile, "subsonic_auth: the environment variable \(passwordVariable) is not set")
        }
        source.signers.append(
            SubsonicSigner(
                user: user, password: password, method: method,
                version: version, client: client))
        source.volatileParameters.formUnion(secretQueryNames)
        return source
    }

    var secretQueryNames: Set<String> { SubsonicAuthPlugin.parameterNames }
}
