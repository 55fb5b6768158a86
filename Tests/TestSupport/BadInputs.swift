import PipelineHost

/// The worst of the internet, served from the loopback server: one case per way a source can be
/// bad, with the error kind it must give. Used by the bad-input test, the CLI's --json test and
/// the soak run.
public struct BadInput: Sendable {
    public let name: String
    public let path: String
    public let response: LoopbackServer.Response
    public let kind: PipelineError.Kind
    /// The start of the error's reason.
    public let reason: String
    /// Requests one failed attempt makes at the server: retries and redirects add to it.
    public let requests: Int
    /// The profile of `BadInputs.profile` it runs under.
    public var profile = "hardened"
}

public enum BadInputs {
    /// Fetch limits: 1 MB bodies, one retry, private addresses blocked (but the loopback server
    /// allowed). No case under them waits on a clock: their windows (no byte for 60 s, 120 s in
    /// all) only end a case that went wrong. With a window of 1 s, then 3, then 10, a fetch thread
    /// held off a busy machine's cores made the cut-off body a timeout (the last on 2026-11-30).
    public static let fetch =
        "timeout = 120, max_bytes = 1000000, low_speed_limit = 100, low_speed_time = 60, "
        + "retries = 1, retry_delay = 0.01, max_redirects = 3, block_private = true, allow_loopback = true"

    /// `fetch` with a 3-second window: for the server that stops sending, the case whose subject
    /// is that clock (profile "hardened-stall"), and for the soak, which counts kinds only.
    public static let stallFetch = fetch.replacingOccurrences(of: "low_speed_time = 60", with: "low_speed_time = 3")

    /// Profiles with a disk cache for originals and a memory cache for variants, so a test can
    /// check that no failure is stored in either: "hardened" with `fetch`, "hardened-stall" with
    /// `stallFetch`.
    public static let profile = hardened("hardened", fetch) + hardened("hardened-stall", stallFetch)

    private static func hardened(_ name: String, _ fetch: String) -> String {
        """
        profile "\(name)" {
          normalize  { drop_query = { "t", "s" } },
          fetch      { \(fetch) },
          cache      { disk = true },
          decode     {},
          downsample { size = 64 },
          encode     { format = "jpeg" },
          cache      { memory = true },
        }

        """
    }

    public static let cases: [BadInput] = {
        let whole = Fixtures.quadrants(width: 400, height: 300)
        let html = "<!DOCTYPE html><html><head><title>Sign in</title></head><body>Please log in</body></html>"
        let subsonic =
            #"<?xml version="1.0" encoding="UTF-8"?><subsonic-response status="failed" version="1.16.1">"#
            + #"<error code="40" message="Wrong username or password"/></subsonic-response>"#
        return [
            BadInput(
                name: "zero-byte body", path: "/bad/empty.jpg", response: .ok([], contentType: "image/jpeg"),
                kind: .notAnImage, reason: "not an image (empty body)", requests: 1),
            BadInput(
                name: "truncated JPEG", path: "/bad/truncated.jpg",
                response: .ok(Array(whole.prefix(whole.count / 2)), contentType: "image/jpeg"),
                kind: .decodeFailed, reason: "downsample failed", requests: 1),
            BadInput(
                name: "random bytes", path: "/bad/noise.jpg", response: .ok(noise(4096), contentType: "image/jpeg"),
                kind: .unsupportedFormat, reason: "unsupported image format", requests: 1),
            BadInput(
                name: "HTML with status 200", path: "/bad/login.jpg",
                response: .ok(Array(html.utf8), contentType: "image/jpeg"),
                kind: .notAnImage, reason: "not an image (text/html)", requests: 1),
            BadInput(
                name: "Subsonic XML error with status 200", path: "/bad/subsonic.jpg",
                response: .ok(Array(subsonic.utf8), contentType: "text/xml"),
                kind: .notAnImage, reason: "not an image (text/xml)", requests: 1),
            BadInput(
                name: "PNG declaring 30000x30000", path: "/bad/bomb.png",
                response: .ok(Fixtures.bombPNG(width: 30000, height: 30000), contentType: "image/png"),
                kind: .pixelLimit, reason: "image is 30000x30000 (900 megapixels)", requests: 1),
            BadInput(
                name: "GIF with 3000 frames", path: "/bad/frames.gif",
                response: .ok(Fixtures.animatedGIF(frames: 3000), contentType: "image/gif"),
                kind: .pixelLimit, reason: "image has 3000 frames, over max_frames (1000)", requests: 1),
            BadInput(
                name: "body beyond max_bytes", path: "/bad/huge.jpg",
                response: .ok([UInt8](repeating: 0xFF, count: 2_000_000), contentType: "image/jpeg"),
                kind: .tooLarge, reason: "body larger than max_bytes (1000000 bytes)", requests: 1),
            BadInput(
                name: "a server that stops sending", path: "/bad/drip.jpg",
                response: .stalled(Array(whole.prefix(400)), gate: "never", sent: 10),
                kind: .timeout, reason: "timed out (Operation too slow", requests: 1, profile: "hardened-stall"),
            BadInput(
                name: "connection closed mid-body", path: "/bad/cut.jpg",
                response: .truncated(Array(whole.prefix(500)), missing: 5000),
                kind: .transport, reason: "transfer closed with 5000 bytes remaining", requests: 2),
            BadInput(
                name: "redirect loop", path: "/bad/loop.jpg", response: .redirect(to: "/bad/loop.jpg"),
                kind: .transport, reason: "too many redirects (more than 3)", requests: 4),
            BadInput(
                name: "redirect to the cloud metadata address", path: "/bad/metadata.jpg",
                response: .redirect(to: "http://169.254.169.254/latest/meta-data/"),
                kind: .blocked, reason: "refused to connect to 169.254.169.254 (link-local)", requests: 1),
            BadInput(
                name: "404", path: "/bad/missing.jpg", response: .status(404),
                kind: .httpStatus, reason: "HTTP 404", requests: 1),
            BadInput(
                name: "500", path: "/bad/error.jpg", response: .status(500),
                kind: .httpStatus, reason: "HTTP 500 (after 2 attempts)", requests: 2),
            BadInput(
                name: "503 with Retry-After", path: "/bad/busy.jpg",
                response: .headers(["Retry-After": "1"], .status(503)),
                kind: .httpStatus, reason: "HTTP 503 (after 2 attempts)", requests: 2),
        ]
    }()

    /// Routes every case on `server`.
    public static func serve(on server: LoopbackServer) {
        for input in cases { server.route(input.path, input.response) }
    }

    /// Bytes no decoder takes, the same every run: a linear congruential sequence with the high
    /// bit set, so it matches no magic number and does not read as text.
    static func noise(_ count: Int) -> [UInt8] {
        var state: UInt32 = 2_463_534_242
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24) | 0x80
        }
    }
}
