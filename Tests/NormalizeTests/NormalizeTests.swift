import PipelineHost
import Testing
import TestSupport

@Suite("normalize: the stable key")
struct NormalizeTests {
    /// Runs only the key stage and returns the source it produces.
    func normalized(_ location: String, drop: [String] = []) async throws -> Source {
        let list = drop.map { "\"\($0)\"" }.joined(separator: ", ")
        let set = try TestPipeline.load(#"profile "k" { normalize { drop_query = { \#(list) } }, fetch {} }"#)
        let stage = set["k"]!.stages[0]
        let context = StageContext(source: location, logger: .init(label: "test"))
        guard case .source(let source) = try await stage.stage.run(.source(Source(location: location)), in: context) else {
            Issue.record("normalize did not give a source")
            return Source(location: "")
        }
        return source
    }

    @Test("scheme and host are lower-cased, the default port and fragment dropped, the query sorted")
    func canonical() async throws {
        let source = try await normalized("HTTPS://Music.Example.COM:443/rest/getCoverArt?size=300&id=al-1#top")
        #expect(source.key == "https://music.example.com/rest/getCoverArt?id=al-1&size=300")
    }

    @Test("a non-default port stays, and an empty path becomes /")
    func port() async throws {
        #expect(try await normalized("http://Host:8080").key == "http://host:8080/")
        #expect(try await normalized("http://host:80/a").key == "http://host/a")
    }

    @Test("listed parameters leave the key, the fetch URL keeps them")
    func dropsAuth() async throws {
        let a = try await normalized("http://m.example/rest/getCoverArt?id=7&u=me&t=aaaa&s=salt1&v=1.16", drop: ["u", "t", "s"])
        let b = try await normalized("http://m.example/rest/getCoverArt?s=salt2&t=bbbb&u=me&id=7&v=1.16", drop: ["u", "t", "s"])
        #expect(a.key == "http://m.example/rest/getCoverArt?id=7&v=1.16")
        #expect(a.key == b.key)
        #expect(a.location == "http://m.example/rest/getCoverArt?id=7&u=me&t=aaaa&s=salt1&v=1.16")
        #expect(a.redacted == "http://m.example/rest/getCoverArt?id=7&u=REDACTED&t=REDACTED&s=REDACTED&v=1.16")
    }

    @Test("credentials in the authority never reach the key")
    func userInfo() async throws {
        let source = try await normalized("https://me:secret@host.example/a.jpg")
        #expect(source.key == "https://host.example/a.jpg")
        #expect(source.redacted == "https://REDACTED@host.example/a.jpg")
    }

    @Test("a plain path is keyed by its absolute file URL")
    func path() async throws {
        let source = try await normalized("/tmp/../tmp/photo.jpg")
        #expect(source.key == "file:///tmp/photo.jpg")
    }

    @Test("the redactor hides well-known secrets even without a profile")
    func redactor() {
        #expect(Redactor.redact("https://x.example/i.jpg?X-Amz-Signature=abc&w=3&token=zz")
                == "https://x.example/i.jpg?X-Amz-Signature=REDACTED&w=3&token=REDACTED")
        #expect(Redactor.redact("/local/path.jpg") == "/local/path.jpg")
    }
}

@Suite("redaction: credentials by pattern, user info masked whole")
struct RedactionTests {
    @Test("credential-like names are masked, case-insensitive, '-' and '_' alike", arguments: [
        "X-Goog-Signature", "X-Goog-Credential", "auth_token", "access-token", "jwt", "apiKey", "API_KEY",
        "sessionid", "client_secret", "Password", "passwd", "x-amz-security-token", "sig", "t", "s", "p", "X%2DGoog%2DSignature",
    ])
    func sensitive(_ name: String) {
        #expect(Redactor.redact("https://cdn.example/a.jpg?\(name)=SECRET1&w=300") == "https://cdn.example/a.jpg?\(name)=REDACTED&w=300")
    }

    @Test("ordinary parameters stay", arguments: ["w", "id", "size", "format", "quality", "v"])
    func ordinary(_ name: String) {
        #expect(Redactor.redact("https://cdn.example/a.jpg?\(name)=7") == "https://cdn.example/a.jpg?\(name)=7")
    }

    @Test("user information is never shown, with or without a password", arguments: [
        "https://TOKEN@host.example/a.jpg", "https://me:pw@host.example/a.jpg", "https://a:b@c@host.example/a.jpg",
    ])
    func userInfo(_ url: String) {
        #expect(Redactor.redact(url) == "https://REDACTED@host.example/a.jpg")
    }

    @Test("a profile's own names, and fragment parameters, are masked too")
    func extraAndFragment() {
        #expect(Redactor.redact("https://h.example/a.jpg?ticket=1&w=3", extraNames: ["Ticket"]) == "https://h.example/a.jpg?ticket=REDACTED&w=3")
        #expect(Redactor.redact("https://h.example/a.jpg#access_token=abc&x=1") == "https://h.example/a.jpg#access_token=REDACTED&x=1")
    }

    @Test("control characters are escaped")
    func controls() {
        #expect(Redactor.redact("/tmp/a\u{1B}[31mred\u{7}.jpg") == "/tmp/a\\x1B[31mred\\x07.jpg")
        #expect(Redactor.redact("/tmp/line\nbreak.jpg") == "/tmp/line\\x0Abreak.jpg")
    }

    @Test("what cache files store masks every parameter value")
    func allValues() {
        #expect(Redactor.redact("https://h.example/a.jpg?id=1&mine=abc", allValues: true) == "https://h.example/a.jpg?id=REDACTED&mine=REDACTED")
    }
}
