import Foundation
import Glibc
import PipelineHost

/// Hosts of a test's own: network namespaces joined by veth links, made with iproute2 and removed
/// by `tearDown()` (or when released). Loopback hides what a network does: a link that goes down,
/// an address that is not 127.0.0.1. Each lab takes a random 10.x.y.0 range, so two test runs on
/// one machine do not meet.
public final class NetworkLab: Sendable {
    /// Why namespaces cannot be made here (not root, or a container that forbids them); nil
    /// when they can.
    public static let unavailable: String? = {
        let probe = "phprobe\(getpid())"
        let added = try? command(["netns", "add", probe])
        guard let added, added.status == 0 else {
            let reason = added?.output.trimmingCharacters(in: .whitespacesAndNewlines) ?? "no /usr/sbin/ip"
            return
                "network namespaces are not allowed here (ip netns add: \(reason)), so the test across hosts did not run"
        }
        _ = try? command(["netns", "del", probe])
        return nil
    }()

    /// The lab's prefix for names (interfaces take at most 15 characters) and its address range.
    let id: String
    /// `10.a.b`: hosts get `10.a.b+n.h`.
    let net: (Int, Int)
    private let made = Locked<(namespaces: [String], links: [String], processes: [Process])>(([], [], []))

    public init() {
        var generator = SystemRandomNumberGenerator()
        id = String(generator.next() as UInt32 % 0xFFFFFF, radix: 16)
        net = (Int.random(in: 100...250, using: &generator), Int.random(in: 0...15, using: &generator) * 16)
    }

    /// The address `host` on subnet `subnet` of the lab (0 ..< 16).
    public func address(_ subnet: Int, _ host: Int) -> String { "10.\(net.0).\(net.1 + subnet).\(host)" }

    /// Makes a namespace with its loopback up; returns its name.
    public func namespace(_ name: String) throws -> String {
        let full = "ph\(id)\(name)"
        try ip(["netns", "add", full])
        made.withLock { $0.namespaces.append(full) }
        try ip(["-n", full, "link", "set", "lo", "up"])
        return full
    }

    /// A bridge in the host namespace, as a switch for several namespaces' links.
    public func bridge(_ name: String) throws -> String {
        let full = "ph\(id)\(name)"
        try ip(["link", "add", full, "type", "bridge"])
        made.withLock { $0.links.append(full) }
        try ip(["link", "set", full, "up"])
        return full
    }

    /// A veth link from `namespace` (its end named `name`, with `address`/24) to the host: the
    /// host's end joins `bridge`, or gets `hostAddress`/24. Returns the namespace end's name.
    @discardableResult
    public func link(
        _ namespace: String, _ name: String, address: String, bridge: String? = nil, hostAddress: String? = nil
    ) throws -> String {
        let inside = "ph\(id)\(name)", outside = "ph\(id)\(name)h"
        try ip(["link", "add", inside, "type", "veth", "peer", "name", outside])
        made.withLock { $0.links.append(outside) }
        try ip(["link", "set", inside, "netns", namespace])
        try ip(["-n", namespace, "addr", "add", address + "/24", "dev", inside])
        try ip(["-n", namespace, "link", "set", inside, "up"])
        if let bridge { try ip(["link", "set", outside, "master", bridge]) }
        if let hostAddress { try ip(["addr", "add", hostAddress + "/24", "dev", outside]) }
        try ip(["link", "set", outside, "up"])
        return inside
    }

    /// An address of the host's own, for a server the namespaces reach through their links to
    /// the host; it is put on `device`, one of the lab's (so it goes with it), but the host
    /// answers it on every link.
    public func hostAddress(_ address: String, on device: String) throws {
        try ip(["addr", "add", address + "/32", "dev", device])
    }

    /// A route in `namespace` to one address of the host's, through the host's end of a link.
    public func route(in namespace: String, to address: String, via gateway: String) throws {
        try ip(["-n", namespace, "route", "add", address + "/32", "via", gateway])
    }

    /// Sets a namespace's link down or up, as a cable pulled or put back.
    public func setLink(_ namespace: String, _ name: String, up: Bool) throws {
        try ip(["-n", namespace, "link", "set", name, up ? "up" : "down"])
    }

    /// Starts `executable` in `namespace`; killed by `tearDown()`.
    public func start(in namespace: String, _ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = ["netns", "exec", namespace, executable] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        made.withLock { $0.processes.append(process) }
    }

    /// Runs `executable` in `namespace` and returns what it printed.
    public func run(in namespace: String, _ executable: String, _ arguments: [String]) async throws -> String {
        try await onOwnThread { try output(of: "/usr/sbin/ip", ["netns", "exec", namespace, executable] + arguments) }
    }

    /// Kills what it started and removes what it made (a namespace takes its links with it).
    public func tearDown() {
        let (namespaces, links, processes) = made.withLock { state in
            defer { state = ([], [], []) }
            return state
        }
        for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        for process in processes { process.waitUntilExit() }
        for namespace in namespaces { _ = try? Self.command(["netns", "del", namespace]) }
        for link in links { _ = try? Self.command(["link", "del", link]) }
    }

    deinit { tearDown() }

    private func ip(_ arguments: [String]) throws {
        let result = try Self.command(arguments)
        guard result.status == 0 else { throw ServerError("ip \(arguments.joined(separator: " ")): \(result.output)") }
    }

    private static func command(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
