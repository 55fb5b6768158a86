import Dispatch
import FetchPlugin
import FuzzerDriver
import KeyNormalizePlugin
import Logging
import PipelineHost
import PipelineProfiles
import VipsPlugin

// The decode path under libFuzzer: every input is handed, as downloaded bytes, to the stages
// after fetch (sniff, header and limits, shrink-on-load, blur, encode). A stage may only fail
// with a PipelineError; anything else, a crash or a sanitizer report is a finding.

/// Three chains, picked by the input's length: the first frame to JPEG, three frames with a
/// blur to WebP, and three frames to GIF (which keeps a GIF source's palettes where they fit),
/// so the still and the animated paths are covered, and the GIF writer's.
private let chains: [[any Stage]] = {
    let lua = """
        profile "still" { fetch {}, decode { max_pixels = 4e6 }, downsample { size = 48 }, encode { format = "jpeg" } }
        profile "animated" {
          fetch {}, decode { max_pixels = 4e6, frames = 3 }, downsample { size = 32, fit = "cover" },
          blur { sigma = 1.5, dim = 0.2 }, encode { format = "webp" },
        }
        profile "gif" { fetch {}, decode { max_pixels = 4e6, frames = 3 }, downsample { size = 32 }, encode { format = "gif" } }
        """
    do {
        let registry = try StageRegistry(plugins: [
            CachePlugin.self, FetchPlugin.self, KeyNormalizePlugin.self, VipsPlugin.self,
        ])
        let set = try ProfileLoader(registry: registry).load(code: Array(lua.utf8), name: "fuzz.lua")
        return set.profiles.map { $0.stages.dropFirst().map(\.stage) }
    } catch {
        fatalError("fuzz profiles do not load: \(error)")
    }
}()

private let context = StageContext(source: "fuzz-input", logger: Logger(label: "fuzz"))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecode(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = ImageBytes(copying: Array(UnsafeBufferPointer(start: data, count: size)))
    let chain = chains[size % chains.count]
    let done = DispatchSemaphore(value: 0)
    Task {
        defer { done.signal() }
        var value = StageValue.encoded(EncodedImage(bytes: bytes))
        for stage in chain {
            do {
                value = try await stage.run(value, in: context)
            } catch is PipelineError {
                return
            } catch {
                fatalError("a stage threw something other than a PipelineError: \(error)")
            }
        }
    }
    done.wait()
    return 0
}

/// SwiftPM links an executable's main() as `FuzzDecode_main`; this one runs libFuzzer.
@_cdecl("FuzzDecode_main")
public func main(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzDecode(data!, size) }
}
