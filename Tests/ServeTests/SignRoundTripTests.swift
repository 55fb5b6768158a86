import PipelineHost
import Testing

@testable import PipelineHostServe

/// What `sign` signs is what serve reads: every path `ServePath` makes parses back, through
/// serve's own parser, into exactly the profile, options and source it was given, and any part
/// that would read otherwise is refused rather than signed.
@Suite struct SignRoundTripTests {
    let signer = try! URLSigner(keys: SigningTests.key("5c"), salts: "0a0b")

    static let profiles = [
        "web", "thumb-2", "a.b_c", "x", "9lives", "web/x", "a b", "", ".hidden", "..", "x%2Fy",
        "w:1", "thumb\u{0}", "ünï", "_x", String(repeating: "p", count: 65),
    ]
    static let optionSets: [[(String, String)]] = [
        [], [("w", "600")], [("w", "600"), ("q", "60")], [("dpr", "1.5")], [("w", "1e+20")], [("f", "webp")],
        [("w", "600/plain/http://evil.test/b.jpg%23")], [("w", "600/x")], [("w", "a:b")], [("w", "")], [("", "600")],
        [("w", "%2F")], [("w", "6 0")], [("w", "..")], [("w", "ü")], [("1w", "600")], [("w-x", "1")],
        [("w", String(repeating: "9", count: 65))],
    ]
    static let sources = [
        "https://example.com/a.jpg", "http://h/x.jpg?id=1&id=2#frag", "https://h/a b/ü.jpg", "http://h//double//slash",
        "https://h/a%2Fb%23c", "http://h/plain/x", "w:100", "/plain/x", "relative.jpg",
        "http://h/" + String(repeating: "z", count: 3000),
        "", "http://h/\n", "s3://bucket/key",
    ]

    @Test func everyPathSignMakesReadsBackAsItsParts() throws {
        var made = 0, refused = 0
        for profile in Self.profiles {
            for options in Self.optionSets {
                for source in Self.sources {
                    for plain in [false, true] {
                        let path: String?
                        do {
                            path = try ServePath.signed(
                                profile: profile, source: source, plain: plain, options: options, signer: signer)
                        } catch {
                            refused += 1
                            continue
                        }
                        let signedPath = try #require(path)
                        made += 1
                        let (signature, signed) = try #require(ImagePath.split(Substring(signedPath)))
                        #expect(signer.accepts(signature, for: signed))
                        let read = try ImagePath(signature: signature, signed: signed)
                        #expect(read.profile == profile)
                        #expect(read.source == source, "\(signedPath)")
                        #expect(
                            read.options.map { "\($0.name):\($0.value)" } == options.map { "\($0.0):\($0.1)" },
                            "\(signedPath)")
                    }
                }
            }
        }
        // Both kinds happen: the grammatical parts are signed, the others refused.
        #expect(made > 500 && refused > 500, "made \(made), refused \(refused)")
    }

    @Test func aValueOrAProfileCannotCarryAnotherSource() {
        let attacks: [(profile: String, options: [(String, String)])] = [
            ("web", [("w", "600/plain/http://evil.test/b.jpg%23")]),
            ("web/plain/http:%2F%2Fevil.test%2Fb.jpg%23", []),
            ("web", [("w", "600/aHR0cDovL2V2aWwudGVzdC9iLmpwZw")]),
            ("web", [("w/plain/http://evil.test/b.jpg#", "1")]),
        ]
        for attack in attacks {
            #expect(throws: ServePath.Refusal.self, "\(attack)") {
                try ServePath.signed(
                    profile: attack.profile, source: "https://example.com/a.jpg", options: attack.options,
                    signer: signer)
            }
        }
    }

    @Test func anEmptySegmentIsNoSecondSpellingOfAPath() throws {
        let path = try #require(
            try ServePath.signed(
                profile: "web", source: "https://example.com/a.jpg", options: [("w", "100")],
                signer: signer))
        let (_, signed) = try #require(ImagePath.split(Substring(path)))
        let encoded = signed.split(separator: "/").last!
        let half = encoded.index(encoded.startIndex, offsetBy: encoded.count / 2)
        for variant in [
            "/web/w:100//\(encoded)", "/web/w:100/\(encoded)/", "/web/w:100/\(encoded[..<half])//\(encoded[half...])",
        ] {
            #expect(throws: ImagePath.Problem.self, "\(variant)") {
                try ImagePath(signature: "x", signed: Substring(variant))
            }
        }
        // The one imgproxy allows still reads: a long source split by single slashes.
        let split = try ImagePath(
            signature: "x", signed: Substring("/web/w:100/\(encoded[..<half])/\(encoded[half...])"))
        #expect(split.source == "https://example.com/a.jpg")
    }
}
