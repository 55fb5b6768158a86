import PipelineHost
import Testing

@testable import PipelineHostRedis

/// Purge messages on the done channel as values: what a node sends, and what it makes of what
/// it hears, with and without a shared secret. No Redis, no clock but the test's.
@Suite struct PurgeMessageTests {
    let seal = EntrySeal(secret: Array(repeating: 7, count: 32))!
    let digests: Set<String> = [String(repeating: "a", count: 64), String(repeating: "b", count: 64)]

    func body(_ message: String) -> Substring { message.dropFirst(PurgeMessage.prefix.count) }

    @Test func aSealedPurgeIsReadBackByAnotherNodeWithTheSecretAndOnlyThen() throws {
        let sent = PurgeMessage.write(digests: digests, node: "n1", now: 1000, seal: seal)
        #expect(sent.count == 1 && sent[0].hasPrefix("purge:"))
        #expect(!sent[0].contains("aaaa"), "sealed and hex-encoded, not the plain body")
        #expect(PurgeMessage.read(body(sent[0]), node: "n2", now: 1010, seal: seal) == .purge(digests))
        #expect(PurgeMessage.read(body(sent[0]), node: "n1", now: 1010, seal: seal) == .own)
        let other = EntrySeal(secret: Array(repeating: 8, count: 32))!
        #expect(
            PurgeMessage.read(body(sent[0]), node: "n2", now: 1010, seal: other)
                == .dropped("not sealed with the shared secret"))
        // A forged plain message, or a sealed one tampered with, is dropped where there is a secret.
        let plain = PurgeMessage.write(digests: digests, node: "evil", now: 1000, seal: nil)[0]
        #expect(
            PurgeMessage.read(body(plain), node: "n2", now: 1000, seal: seal)
                == .dropped("not sealed with the shared secret"))
        var tampered = Array(sent[0].utf8)
        tampered[tampered.count - 1] = tampered.last == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        #expect(
            PurgeMessage.read(body(String(decoding: tampered, as: UTF8.self)), node: "n2", now: 1000, seal: seal)
                == .dropped("not sealed with the shared secret"))
    }

    @Test func aSealedMessageOutsideItsMinuteIsAReplayAndDropped() {
        let sent = PurgeMessage.write(digests: digests, node: "n1", now: 1000, seal: seal)[0]
        #expect(PurgeMessage.read(body(sent), node: "n2", now: 1059, seal: seal) == .purge(digests))
        #expect(PurgeMessage.read(body(sent), node: "n2", now: 1061, seal: seal) == .dropped("sent over 60 s ago"))
        #expect(PurgeMessage.read(body(sent), node: "n2", now: 939, seal: seal) == .dropped("sent over 60 s ago"))
    }

    @Test func withoutASecretPlainMessagesAreReadAsBefore() {
        let sent = PurgeMessage.write(digests: digests, node: "n1", now: 1000, seal: nil)[0]
        #expect(sent.hasPrefix("purge:n1:1000000:"))
        #expect(PurgeMessage.read(body(sent), node: "n2", now: 99_999, seal: nil) == .purge(digests))
    }

    @Test func aPurgeOfManySourcesIsSentInMessagesOf500AndALargerOneIsDropped() {
        let many = Set((0..<1201).map { String(format: "%064x", $0) })
        let sent = PurgeMessage.write(digests: many, node: "n1", now: 1000, seal: seal)
        #expect(sent.count == 3)
        var heard = Set<String>()
        for message in sent {
            guard case .purge(let part) = PurgeMessage.read(body(message), node: "n2", now: 1000, seal: seal) else {
                Issue.record("not read: \(message.prefix(40))")
                continue
            }
            #expect(part.count <= PurgeMessage.maxDigests)
            heard.formUnion(part)
        }
        #expect(heard == many)
        let forged = "n9:1000000:" + many.sorted().prefix(501).joined(separator: ",")
        #expect(PurgeMessage.read(Substring(forged), node: "n2", now: 1000, seal: nil) == .dropped("over 500 sources"))
        let huge = Substring(String(repeating: "ab", count: PurgeMessage.maxLength))
        #expect(
            PurgeMessage.read(huge, node: "n2", now: 1000, seal: seal)
                == .dropped("over \(PurgeMessage.maxLength) bytes"))
    }

    @Test(arguments: [
        "", "n9", "n9:x:" + String(repeating: "a", count: 64), "n9:1:", "n9:1:abc",
        "n9:1:" + String(repeating: "g", count: 64),
    ])
    func malformedMessagesAreDropped(_ text: String) {
        #expect(PurgeMessage.read(Substring(text), node: "n2", now: 0, seal: nil) == .dropped("malformed"))
    }
}
