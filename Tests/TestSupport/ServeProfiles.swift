extension Fixtures {
    /// serve's usual test profile: the loopback origin allowed, the original kept on disk, a 64 px
    /// JPEG in memory and on disk.
    public static let cachedThumbProfile = """
        profile "thumb" {
          fetch      { block_private = true, allow_loopback = true, retries = 0 },
          cache      { disk = true },
          decode     {},
          downsample { size = 64, fit = "cover" },
          encode     { format = "jpeg" },
          cache      { memory = true, disk = true },
        }
        """
}
