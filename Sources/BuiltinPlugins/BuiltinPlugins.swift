import CirclePlugin
import FetchPlugin
import KeyNormalizePlugin
import PipelineHost
import SubsonicAuthPlugin
import VipsPlugin

extension Array where Element == any PipelinePlugin.Type {
    /// The plugins of the stock `pipelinehost`: cache, fetch, normalize, the libvips stages,
    /// subsonic_auth and circle. A package adds its own: `[MyPlugin.self] + .builtin`, or lists
    /// only the plugins it wants, and links only those: the command line knows none of them.
    public static var builtin: [any PipelinePlugin.Type] {
        [
            CachePlugin.self, FetchPlugin.self, KeyNormalizePlugin.self, VipsPlugin.self, SubsonicAuthPlugin.self,
            CirclePlugin.self,
        ]
    }
}
