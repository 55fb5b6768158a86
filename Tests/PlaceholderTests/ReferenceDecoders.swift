import Foundation
import PlaceholderHashes
import TestSupport

/// The formats' reference implementations, from PyPI (`blurhash`, `thumbhash`), in the venv
/// scripts/setup test makes at .build/reference-venv: what they encode from the same pixels, and what
/// they read back from our hashes.
enum ReferenceDecoders {
    struct Answer: Decodable {
        /// The reference encoder's BlurHash of the same pixels (flattened over white, as ours).
        let blurhash: String
        /// Our ThumbHash's average colour and alpha as the reference decodes them, 0...1.
        let thumbAverage: [Double]
        let thumbAspect: Double
        /// Our BlurHash's average colour (its DC term) as the reference reads it, sRGB 0...255.
        let blurAverage: [Double]
    }

    static var python: String { Fixtures.path(".build/reference-venv/bin/python") }

    /// The Python port's ThumbHash encoder rounds halves to even and fails on alpha, so only its
    /// decoders are asked about ThumbHash; BlurHash's encoder floors, as the format's reference does.
    static let script = """
        import json, sys, blurhash, thumbhash
        from blurhash.blurhash import base83_decode
        for line in sys.stdin:
            job = json.loads(line)
            w, h, px = job["width"], job["height"], job["pixels"]
            rows = [[[round(px[(y * w + x) * 4 + c] * px[(y * w + x) * 4 + 3] / 255 + 255 * (1 - px[(y * w + x) * 4 + 3] / 255))
                      for c in range(3)] for x in range(w)] for y in range(h)]
            dc = base83_decode(job["blurhash"][2:6])
            print(json.dumps({
                "blurhash": blurhash.encode(rows, 4, 3),
                "thumbAverage": list(thumbhash.thumb_hash_to_average_rgba(job["thumbhash"])),
                "thumbAspect": thumbhash.thumb_hash_to_approximate_aspect_ratio(job["thumbhash"]),
                "blurAverage": [dc >> 16, (dc >> 8) & 255, dc & 255],
            }), flush=True)
        """

    /// The reference's view of each image and of our hashes of it.
    static func check(_ image: RGBAImage, blurhash: String, thumbhash: [UInt8]) async throws -> Answer {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ReferenceFailure("no reference venv at \(python): run scripts/setup test")
        }
        struct Job: Encodable { let width: Int, height: Int, pixels: [UInt8], blurhash: String, thumbhash: [UInt8] }
        let job = try JSONEncoder().encode(
            Job(
                width: image.width, height: image.height, pixels: image.pixels,
                blurhash: blurhash, thumbhash: thumbhash))
        let outcome = try await CLIProcess.start(
            ["-c", script], input: String(decoding: job, as: UTF8.self) + "\n",
            executable: python
        ).finished(timeout: 300)
        guard outcome.status == 0 else { throw ReferenceFailure("the reference failed: \(outcome.stderr)") }
        return try JSONDecoder().decode(Answer.self, from: Data(outcome.stdout.utf8))
    }
}

extension ReferenceDecoders {
    /// What the reference decoders read from hashes alone: no pixels to compare with.
    struct Reading: Decodable {
        let thumbAverage: [Double]
        let thumbAspect: Double
        let blurAverage: [Double]
        /// BlurHash's components across and down, from its first character.
        let blurComponents: [Int]
    }

    static let readScript = """
        import json, sys, thumbhash
        from blurhash.blurhash import base83_decode
        for line in sys.stdin:
            job = json.loads(line)
            dc = base83_decode(job["blurhash"][2:6])
            size = base83_decode(job["blurhash"][0])
            print(json.dumps({
                "thumbAverage": list(thumbhash.thumb_hash_to_average_rgba(job["thumbhash"])),
                "thumbAspect": thumbhash.thumb_hash_to_approximate_aspect_ratio(job["thumbhash"]),
                "blurAverage": [dc >> 16, (dc >> 8) & 255, dc & 255],
                "blurComponents": [size % 9 + 1, size // 9 + 1],
            }), flush=True)
        """

    /// The reference's reading of a BlurHash and a ThumbHash (its bytes).
    static func read(blurhash: String, thumbhash: [UInt8]) async throws -> Reading {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw ReferenceFailure("no reference venv at \(python): run scripts/setup test")
        }
        struct Job: Encodable { let blurhash: String, thumbhash: [UInt8] }
        let job = try JSONEncoder().encode(Job(blurhash: blurhash, thumbhash: thumbhash))
        let outcome = try await CLIProcess.start(
            ["-c", readScript], input: String(decoding: job, as: UTF8.self) + "\n",
            executable: python
        ).finished(timeout: 300)
        guard outcome.status == 0 else { throw ReferenceFailure("the reference failed: \(outcome.stderr)") }
        return try JSONDecoder().decode(Reading.self, from: Data(outcome.stdout.utf8))
    }
}

/// Why the reference could not be asked.
struct ReferenceFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
