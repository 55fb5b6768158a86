import HTTPTypes
import Hummingbird
import HummingbirdTesting
import PipelineHost
import PipelineHostServe
import PipelineProfiles
import PipelineTesting
import Testing

/// Serve's routes on Hummingbird's router test client, over the fake stages: no socket, no
/// libvips, no curl. What reaches the image route, what the operational endpoints answer, 405s,
/// and the status table, in milliseconds.
@Suite("serve: routes, over the router and fake stages")
struct ServeRouterTests {
    let origin = FakeOrigin()

    func service(maxQueue: Int = 256) throws -> ServeApplication {
        let settings = ServeSettings(port: 0, signer: try URLSigner(keys: nil, salts: nil), allowUnsigned: true, maxQueue: maxQueue,
                                     pipeline: PipelineConfiguration(cache: CacheSettings(mode: .normal)))
        let origin = origin
        return try ServeApplication(settings: settings) {
            try ProfileLoader(registry: FakeStages.registry(origin: origin)).load(
                code: Array(#"profile "p" { fetch {}, decode {}, encode {}, cache { memory = true } }"#.utf8), name: "serve.lua")
        }
    }

    static func image(_ path: String) -> String { ServePath.unsafe(profile: "p", source: "http://origin.test" + path) }

    @Test("health and ready answer by GET and HEAD; metrics by GET")
    func operational() async throws {
        try await service().application().test(.router) { client in
            for method: HTTPRequest.Method in [.get, .head] {
                try await client.execute(uri: "/health", method: method) { #expect($0.status == .ok) }
                try await client.execute(uri: "/ready", method: method) { #expect($0.status == .ok) }
            }
            try await client.execute(uri: "/health", method: .get) { #expect(String(buffer: $0.body) == "ok\n") }
            try await client.execute(uri: "/metrics", method: .get) {
                #expect($0.status == .ok)
                #expect($0.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            }
        }
    }

    @Test("a method no route serves is 405 with Allow, in serve's JSON", arguments: [
        (HTTPRequest.Method.put, "/x"), (.delete, "/health"), (.post, "/health"), (.post, "/"), (.patch, Self.image("/a.jpg")),
    ])
    func methodNotAllowed(_ method: HTTPRequest.Method, _ path: String) async throws {
        try await service().application().test(.router) { client in
            try await client.execute(uri: path, method: method) { response in
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, HEAD")
                #expect(String(buffer: response.body).contains(#""kind":"method_not_allowed""#))
            }
        }
    }

    /// What the image route answers them: a single segment is not an image path; more are
    /// read as a signature and a profile, as "/nothing/x" is.
    @Test("every other GET path is an image path, the operational paths' own children and the root too", arguments: [
        ("/", 404), ("/prefetch", 404), ("/nothing", 404), ("/health/x", 403), ("/ready/x/y", 403), ("/metrics/x", 403), ("/nothing/x", 403),
    ])
    func imageRoute(_ path: String, _ status: Int) async throws {
        try await service().application().test(.router) { client in
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status.code == status)
                let kind = status == 404 ? #""kind":"not_found""# : #""kind":"forbidden","reason":"bad signature""#
                #expect(String(buffer: response.body).contains(kind))
            }
        }
    }

    @Test("an image answers its bytes, then from memory; a missing source is 404 naming it")
    func images() async throws {
        origin.serve("/a.jpg", Array("twelve bytes".utf8))
        origin.fail("/gone.jpg", with: PipelineError(.httpStatus, "HTTP 404"))
        try await service().application().test(.router) { client in
            try await client.execute(uri: Self.image("/a.jpg"), method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "12x1")
            }
            try await client.execute(uri: Self.image("/a.jpg"), method: .get) { #expect($0.status == .ok) }
            #expect(origin.started("/a.jpg") == 1, "the second answer came from the cache")
            try await client.execute(uri: Self.image("/gone.jpg"), method: .get) { response in
                #expect(response.status == .badGateway || response.status == .notFound)
                #expect(String(buffer: response.body).contains("http://origin.test/gone.jpg"))
            }
        }
    }
}
