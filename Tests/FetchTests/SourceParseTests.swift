import FetchPlugin
import PipelineHost
import TestSupport
import Testing

/// One parse of a source decides the policy, the key and the transfer. A source that two
/// readers could read differently is refused before anything runs.
@Suite("sources: the host the policy and key see is the host libcurl connects to")
struct SourceParseTests {
    @Test("http:/ATTACKER/x://ALLOWED/photo.jpg fetches nothing and never fills ALLOWED's key")
    func oneSlashAfterScheme() async throws {
        let allowed = try LoopbackServer(), attacker = try LoopbackServer()
        let real = Fixtures.quadrants(width: 64, height: 48), fake = Fixtures.quadrants(width: 48, height: 64)
        allowed.route("/photo.jpg", .ok(real, contentType: "image/jpeg"))
        attacker.route("/x://127.0.0.1:\(allowed.port)/photo.jpg", .ok(fake, contentType: "image/jpeg"))
        let pipeline = Pipeline(
            profiles: try TestPipeline.load(
                """
                profile "p" { normalize {}, fetch { retries = 0 }, cache { memory = true } }
                """))
        let attack = "http:/127.0.0.1:\(attacker.port)/x://127.0.0.1:\(allowed.port)/photo.jpg"
        let error = await #expect(throws: PipelineError.self) {
            try await pipeline.image(for: ImageRequest(source: attack, profile: "p"))
        }
        #expect(error?.kind == .invalidSource)
        #expect(error?.reason.contains("followed by //") == true, "\(String(describing: error))")
        let honest = try await pipeline.image(for: ImageRequest(source: allowed.url("/photo.jpg"), profile: "p"))
        #expect(firstDifference(honest.bytes, real) == nil)
        #expect(attacker.requestLog.isEmpty)
    }

    @Test(
        "refused shapes: each names why",
        arguments: [
            ("http:/evil/x://good/a.jpg", "followed by //"), ("http:evil/x://good/a.jpg", "followed by //"),
            ("http:///evil/a.jpg", "no host"), ("http://good\\@evil/a.jpg", "backslash"),
            ("http://a@b@evil/a.jpg", "@ in the user information"), ("http://go%6Fd/a.jpg", "characters a host name"),
            ("http://127.1/a.jpg", "plain IPv4"), ("http://0x7f.0.0.1/a.jpg", "plain IPv4"),
            ("http://2130706433/a.jpg", "plain IPv4"),
            ("http://017.0.0.1/a.jpg", "plain IPv4"), ("http://good/a\u{0}.jpg", "control character"),
            ("http://good/a\n.jpg", "control character"), ("http://good:99999/a.jpg", "port"),
            ("http://[::1%25eth0]/a.jpg", "IPv6"),
            ("http://ü.example/a.jpg", "punycode"), ("http://good/a b.jpg", "space"),
            ("file://evil/etc/passwd", "names a host"),
        ])
    func refused(_ source: String, _ why: String) {
        let ambiguity = SourceLocation(source).ambiguity
        #expect(ambiguity?.contains(why) == true, "\(source): \(String(describing: ambiguity))")
        #expect(throws: PipelineError.self) { try FetchPlugin.transferURL(source) }
    }

    @Test(
        "accepted shapes keep their meaning",
        arguments: [
            "http://good/a.jpg", "HTTPS://Good.Example:8443/a.jpg?x=1#f", "http://u:p@good/a.jpg",
            "http://[::1]:8080/a",
            "http://good/x://evil/a.jpg", "http://good/a\\b.jpg", "http://good/?@evil/", "http://good#@evil/",
            "http://good:/a",
            "file:///tmp/a.jpg", "file:/tmp/a.jpg", "/tmp/a b.jpg", "photo.jpg",
        ])
    func accepted(_ source: String) {
        #expect(SourceLocation(source).ambiguity == nil, "\(source)")
    }

    @Test("allow_hosts holds every redirect to the list, as libcurl reads the Location")
    func redirectsChecked() async throws {
        let server = try LoopbackServer()
        server.route("/photo.jpg", .ok(Fixtures.quadrants(width: 64, height: 48), contentType: "image/jpeg"))
        server.route("/away", .redirect(to: server.url("/photo.jpg")))  // from localhost to 127.0.0.1
        server.route("/stay", .redirect(to: "http://localhost:\(server.port)/photo.jpg"))
        let profile = fetchOnly(#"allow_hosts = { "LocalHost" }, retries = 0"#)
        let away = try await TestPipeline.failure(profile, source: "http://localhost:\(server.port)/away")
        #expect(away?.kind == .blocked)
        #expect(away?.reason.contains("127.0.0.1") == true, "\(String(describing: away))")
        #expect(server.requestCount("/photo.jpg") == 0)
        let stay = try await TestPipeline.run(profile, source: "http://localhost:\(server.port)/stay")
        #expect(stay.bytes.count > 0)
        let direct = try await TestPipeline.failure(profile, source: server.url("/photo.jpg"))
        #expect(direct?.kind == .blocked)
        #expect(server.requestCount("/photo.jpg") == 1, "a source outside the list is refused before it connects")
    }

    /// URLs of every odd shape, from parts: either refused, or libcurl reads the very host and
    /// port the policy saw (and the key was made from).
    @Test("10,000 generated URLs: refused, or read alike by our parse and libcurl's")
    func differential() throws {
        let schemes = ["http", "HTTP", "https", "hTtPs"]
        let separators = ["://", ":/", ":", ":///", ":\\\\", "://\\", ":////"]
        let users = [
            "", "u@", "u:p@", "u@v@", "@", "a%40b@", "u:p:q@", "good@", "x\\@", "x/@", "x?@", "x#@", "x;@", "u:@",
        ]
        let hosts = [
            "good.example", "GOOD.example", "127.0.0.1", "[::1]", "[::ffff:127.0.0.1]", "127.1", "0x7f.0.0.1",
            "2130706433", "017.0.0.1", "good.example.", "a%2eb", "ü.example", "a_b", "", "[::1", "a b", "a\tb",
            "a\u{0}b", "[fe80::1%25lo]", "evil\\good", "good.example;x", "evil.example#", "1.2.3.4.5",
            "xn--bcher-kva.example",
        ]
        let ports = ["", ":", ":80", ":8080", ":0080", ":99999", ":x", ":-1", ":8080:9090", ":80@evil"]
        let tails = [
            "", "/", "/p.jpg", "/x://evil/p", "\\evil/p", "/a\\b", "/a b", "/%2F", "/;a=b", "?q=1", "#frag",
            "?@evil/", "#@evil/", "/ü", "/\r\n", "/a?b#c@evil", "@evil/p", ":80/p", "/p?x=//evil",
        ]
        var random = SeededGenerator(seed: 25)
        var (accepted, refused) = (0, 0)
        for _ in 0..<10_000 {
            // Half the time each part is its plain first choice, so many URLs are accepted and
            // the odd parts meet each other in plain company too.
            let pieces = [schemes, separators, users, hosts, ports, tails].map {
                $0[random.next(2) == 0 ? 0 : random.next($0.count)]
            }
            var source = pieces.joined()
            if random.next(10) == 0 {  // a stray byte anywhere
                let stray = ["\u{0}", "\t", "\u{7F}", " ", "\\", "@", "#", "?", "%", "/"][random.next(10)]
                let at = source.index(source.startIndex, offsetBy: random.next(source.count + 1))
                source.insert(contentsOf: stray, at: at)
            }
            guard let transfer = try? FetchPlugin.transferURL(source) else {
                refused += 1
                continue
            }
            accepted += 1
            let location = SourceLocation(source)
            let curl = FetchPlugin.curlReading(transfer.url)
            #expect(curl != nil, "libcurl cannot parse \(transfer.url), which we accepted")
            #expect(
                curl?.host == location.host && transfer.host == location.host,
                "\(source): libcurl reads \(String(describing: curl))")
            #expect(
                curl?.port == location.port,
                "\(source): port \(String(describing: curl?.port)) against \(String(describing: location.port))")
        }
        #expect(accepted > 2000 && refused > 2000, "accepted \(accepted), refused \(refused)")
    }
}
