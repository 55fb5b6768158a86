extension Fixtures {
    /// serve's usual test profile: the loopback origin allowed, the original kept on disk, a 64 px
    /// JPEG in memory and on disk. Its transfers may last two minutes: an origin a test holds is
    /// let go by the test, never by a clock that a loaded machine can outrun.
    public static let cachedThumbProfile = """
        profile "thumb" {
          fetch      { block_private = true, allow_loopback = true, retries = 0, timeout = 120, low_speed_time = 120 },
          cache      { disk = true },
          decode     {},
          downsample { size = 64, fit = "cover" },
          encode     { format = "jpeg" },
          cache      { memory = true, disk = true },
        }
        """
}
