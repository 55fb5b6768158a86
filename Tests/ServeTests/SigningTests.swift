import PipelineHost
import Testing

@testable import PipelineHostServe

/// Signed paths as imgproxy makes them: HMAC-SHA256 over salt + path, base64url, several keys.
@Suite struct SigningTests {
    /// The published vector's key ("secret") is 6 bytes: only this test lowers the minimum.
    let signer = try! URLSigner(keys: "736563726574", salts: "68656c6c6f", minimumKeyBytes: 6)

    @Test func aSignedPathIsAcceptedAndAnyChangeIsNot() throws {
        let path = try #require(
            try ServePath.signed(profile: "thumbnail", source: "https://example.com/a.jpg", signer: signer))
        let (signature, signed) = try #require(ImagePath.split(Substring(path)))
        #expect(signature.count == 43)
        #expect(signer.accepts(signature, for: signed))
        #expect(!signer.accepts(signature, for: signed.replacingOccurrences(of: "thumbnail", with: "thumbnaiL")[...]))
        var flipped = String(signature)
        flipped.replaceSubrange(flipped.startIndex...flipped.startIndex, with: flipped.first == "A" ? "B" : "A")
        #expect(!signer.accepts(flipped[...], for: signed))
    }

    /// The reference value: HMAC-SHA256(key "secret", "hello" + "/thumbnail/plain/x"), computed
    /// independently with `openssl dgst -sha256 -hmac secret`, then base64url.
    @Test func theSignatureIsImgproxysHMAC() throws {
        #expect(signer.signature(for: "/thumbnail/plain/x") == "SViuBxN2kowwjPC7x7y6a_TDppDgJmSU59COrM1cPSU")
    }

    @Test func signaturesOfTheWrongLengthOrAlphabetAreRefused() {
        let signed: Substring = "/thumbnail/plain/x"
        for bad in [
            "", "a", String(repeating: "A", count: 42), String(repeating: "A", count: 44),
            String(repeating: "A", count: 1000), "SViuBxN2kowwjPC7x7y6a/TDppDgJmSU59COrM1cPSU", "unsafe",
        ] {
            #expect(!signer.accepts(bad[...], for: signed), "\(bad)")
        }
    }

    @Test func rotatedKeysAreAllAcceptedAndTheFirstSigns() throws {
        let old = try URLSigner(keys: Self.key("01"), salts: "03")
        let rotated = try URLSigner(keys: Self.key("a1") + "," + Self.key("01"), salts: "a3,03")
        let oldPath = try #require(try ServePath.signed(profile: "p", source: "http://h/x.jpg", signer: old))
        let (signature, signed) = try #require(ImagePath.split(Substring(oldPath)))
        #expect(rotated.accepts(signature, for: signed))
        let newPath = try #require(try ServePath.signed(profile: "p", source: "http://h/x.jpg", signer: rotated))
        #expect(newPath != oldPath)
        let (newSignature, _) = try #require(ImagePath.split(Substring(newPath)))
        #expect(!old.accepts(newSignature, for: signed))
    }

    @Test func keysMustBeHexAndPaired() throws {
        #expect(throws: URLSigner.KeyError.self) { try URLSigner(keys: "zz", salts: "00") }
        #expect(throws: URLSigner.KeyError.self) {
            try URLSigner(keys: Self.key("01") + "," + Self.key("02"), salts: "00")
        }
        #expect(throws: URLSigner.KeyError.self) { try URLSigner(keys: Self.key("01") + "0", salts: "00") }
        #expect(try URLSigner(keys: nil, salts: nil).hasKeys == false)
    }

    @Test func weakKeysAreRefusedWithHowToMakeOne() throws {
        for weak in [
            "00", "0102030405060708", String(repeating: "ab", count: 31), Self.key("01") + ",0102",
            String(repeating: "00", count: 32), String(repeating: "61", count: 64),
            String(repeating: "0102", count: 16),
        ] {
            let error = #expect(throws: URLSigner.KeyError.self) {
                try URLSigner(keys: weak, salts: weak.contains(",") ? "00,00" : "00")
            }
            #expect(error?.description.contains("openssl rand -hex 32") == true, "\(weak)")
        }
        #expect(try URLSigner(keys: Self.key("ff"), salts: "00").hasKeys)
        // Every key needs a salt of its own: an empty one ("x," in the list) is a missing one.
        for salts in ["", "00,", ",00"] {
            #expect(throws: URLSigner.KeyError.self, "\(salts)") {
                try URLSigner(keys: Self.key("01") + "," + Self.key("02"), salts: salts)
            }
        }
    }

    /// The 43rd character holds 4 bits of the MAC and 2 unused ones: only the spelling with
    /// the unused bits zero is the signature; the 3 others would be 3 more CDN keys.
    @Test func onlyTheCanonicalSpellingOfASignatureIsAccepted() throws {
        let signed: Substring = "/thumbnail/plain/x"
        let signature = try #require(signer.signature(for: String(signed)))
        #expect(signer.accepts(signature[...], for: signed))
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let last = try #require(alphabet.firstIndex(of: signature.last!))
        for unused in 1..<4 {
            let variant = String(signature.dropLast()) + String(alphabet[(last & ~3) | unused])
            #expect(Base64URL.decode(variant[...]) == Base64URL.decode(signature[...]), "the same MAC bytes")
            #expect(!signer.accepts(variant[...], for: signed), "\(variant)")
        }
    }

    /// A 32-byte key that starts at `byte` and steps through 32 distinct values, for tests where
    /// the key's value does not matter.
    static func key(_ byte: String) -> String {
        let start = Int(byte, radix: 16)!
        return (0..<32).map { index in
            let value = String((start + index * 37) & 0xff, radix: 16)
            return value.count == 1 ? "0" + value : value
        }.joined()
    }

    @Test func sourcesComeBackFromBase64AndPlainPaths() throws {
        let source = "https://example.com/rest/getCoverArt?id=1&u=ann&t=abc&s=xyz"
        let encoded = try ImagePath(
            parsing: Substring("/sig" + ServePath.path(profile: "thumbnail", source: source, plain: false)))
        #expect(encoded.profile == "thumbnail" && encoded.source == source)
        let plain = try ImagePath(
            parsing: Substring("/sig" + ServePath.path(profile: "thumbnail", source: source, plain: true)))
        #expect(plain.source == source)
        // imgproxy's plain form with slashes left as they are.
        #expect(try ImagePath(parsing: "/sig/p/plain/http://h/a/b.jpg").source == "http://h/a/b.jpg")
    }

    @Test func malformedPathsAreRefused() {
        #expect(throws: ImagePath.Problem.notAnImagePath) { try ImagePath(parsing: "/") }
        #expect(throws: ImagePath.Problem.notAnImagePath) { try ImagePath(parsing: "/sig/thumbnail") }
        #expect(throws: ImagePath.Problem.notAnImagePath) { try ImagePath(parsing: "/sig//aGk") }
        #expect(throws: ImagePath.Problem.self) { try ImagePath(parsing: "/sig/p/plain/%zz") }
        #expect(throws: ImagePath.Problem.self) { try ImagePath(parsing: "/sig/p/plain/%C3") }
        #expect(throws: ImagePath.Problem.self) { try ImagePath(parsing: "/sig/p/not*base64") }
    }

    @Test func xPriorityNamesAQueuePriority() {
        #expect(ImageRoute.priority("low") == .low)
        #expect(ImageRoute.priority("HIGH") == .high)
        #expect(ImageRoute.priority("normal") == .normal)
        #expect(ImageRoute.priority("urgent") == .normal)
        #expect(ImageRoute.priority(nil) == .normal)
    }

    @Test func acceptPicksTheSmallestFormatTheClientReads() {
        let chrome = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"
        #expect(FormatChoice.choose(accept: chrome, canWriteAVIF: true) == "avif")
        #expect(FormatChoice.choose(accept: chrome, canWriteAVIF: false) == "webp")
        #expect(FormatChoice.choose(accept: "image/webp;q=0, image/avif ; q=0.0", canWriteAVIF: true) == "jpeg")
        #expect(FormatChoice.choose(accept: "image/png,image/*;q=0.8,*/*;q=0.5", canWriteAVIF: true) == "jpeg")
        #expect(FormatChoice.choose(accept: nil, canWriteAVIF: true) == "jpeg")
    }

    @Test(
        "a weight outside RFC 9110's grammar makes its item count for nothing",
        arguments: [
            "NaN", "nan", "inf", "-1", "1e0", "0x1", "2", "1.5", "0.0001", "1.001", "", "+1", " ", "0,5", ".5",
        ])
    func malformedWeightsSelectNothing(_ weight: String) {
        #expect(FormatChoice.choose(accept: "image/avif;q=\(weight)", canWriteAVIF: true) == "jpeg", "q=\(weight)")
        #expect(
            FormatChoice.choose(accept: "image/webp;q=\(weight), image/avif;q=0", canWriteAVIF: true) == "jpeg",
            "q=\(weight)")
    }

    @Test("weights in the grammar count", arguments: ["1", "1.", "1.0", "1.000", "0.001", "0.5", "0.999"])
    func wellFormedWeightsSelect(_ weight: String) {
        #expect(FormatChoice.choose(accept: "image/avif;q=\(weight)", canWriteAVIF: true) == "avif", "q=\(weight)")
    }
}
