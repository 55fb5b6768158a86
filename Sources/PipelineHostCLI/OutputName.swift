import PipelineHost

/// Names output files <stem>-<hash>.<profile>.<ext>. The hash is of the normalized source key,
/// so two salted URLs of one image get the same name and two different images never collide.
enum OutputName {
    static func path(for result: PipelineResult, in directory: String) -> String {
        let name = "\(stem(of: result.request.source))-\(hash(result.sourceKey)).\(result.request.profile).\(fileExtension(result.format))"
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    static func stem(of source: String) -> String {
        var path = Substring(source)
        if let cut = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<cut] }
        var last = path.split(separator: "/").last.map(String.init) ?? ""
        if last.contains(":") { last = "" }  // "https:" from a bare host
        if let dot = last.lastIndex(of: "."), dot != last.startIndex { last = String(last[..<dot]) }
        let safe = String(last.unicodeScalars.map { c -> Character in
            c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "-" || c == "_" ? Character(c) : "_"
        }.prefix(40))
        return safe.isEmpty ? "image" : safe
    }

    /// 32-bit FNV-1a as 8 hex digits: short, stable across runs and platforms.
    static func hash(_ text: String) -> String {
        var value: UInt32 = 2_166_136_261
        for byte in text.utf8 { value = (value ^ UInt32(byte)) &* 16_777_619 }
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }

    static func fileExtension(_ format: String?) -> String {
        switch format {
        case "jpeg": "jpg"
        case let format?: format
        case nil: "bin"
        }
    }
}
