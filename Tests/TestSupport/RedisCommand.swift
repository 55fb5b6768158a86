import Foundation
import Glibc

/// What Redis answered, in RESP's shapes.
public indirect enum RedisValue: Sendable, Equatable {
    case text(String)
    case error(String)
    case integer(Int)
    case null
    case array([RedisValue])

    /// The text of a status or bulk string (an integer as digits); "" otherwise.
    public var text: String {
        switch self {
        case .text(let text): text
        case .integer(let number): String(number)
        default: ""
        }
    }

    public var elements: [RedisValue] { if case .array(let elements) = self { elements } else { [] } }
}

/// One command to a Redis on 127.0.0.1, over a socket of its own: what a fixture asks many
/// times (is it up, who is master, how many keys) without starting a redis-cli process each
/// time, which on a busy machine cost the other tests their CPU.
enum RedisCommand {
    /// Connects (AUTH with `password` first), sends `words`, and reads one reply; nil when the
    /// server cannot be reached or the reply does not come within `timeout` seconds.
    static func send(_ words: [String], port: Int, password: String?, timeout: Double = 5) -> RedisValue? {
        guard let fd = connectLoopback(port: port, timeout: timeout) else { return nil }
        defer { close(fd) }
        var reader = Reader(fd: fd)
        if let password {
            guard write(["AUTH", password], to: fd), case .text = reader.value() else { return nil }
        }
        guard write(words, to: fd) else { return nil }
        return reader.value()
    }

    private static func write(_ words: [String], to fd: Int32) -> Bool {
        var message = "*\(words.count)\r\n"
        for word in words { message += "$\(word.utf8.count)\r\n\(word)\r\n" }
        let bytes = Array(message.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    /// Reads RESP values off the socket.
    private struct Reader {
        let fd: Int32
        var buffer: [UInt8] = []

        init(fd: Int32) { self.fd = fd }

        mutating func value() -> RedisValue? {
            guard let line = line(), let kind = line.first else { return nil }
            let rest = String(line.dropFirst())
            switch kind {
            case "+": return .text(rest)
            case "-": return .error(rest)
            case ":": return Int(rest).map(RedisValue.integer)
            case "$":
                guard let length = Int(rest) else { return nil }
                guard length >= 0 else { return .null }
                guard let bytes = take(length + 2) else { return nil }
                return .text(String(decoding: bytes.prefix(length), as: UTF8.self))
            case "*":
                guard let count = Int(rest) else { return nil }
                guard count >= 0 else { return .null }
                var elements: [RedisValue] = []
                for _ in 0..<count {
                    guard let element = value() else { return nil }
                    elements.append(element)
                }
                return .array(elements)
            default: return nil
            }
        }

        private mutating func line() -> String? {
            while true {
                if let end = buffer.firstIndex(of: 10), end > 0, buffer[end - 1] == 13 {
                    defer { buffer.removeFirst(end + 1) }
                    return String(decoding: buffer[..<(end - 1)], as: UTF8.self)
                }
                guard fill() else { return nil }
            }
        }

        private mutating func take(_ count: Int) -> [UInt8]? {
            while buffer.count < count { guard fill() else { return nil } }
            defer { buffer.removeFirst(count) }
            return Array(buffer.prefix(count))
        }

        private mutating func fill() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { return false }
            buffer += chunk.prefix(count)
            return true
        }
    }
}
