/// The value of auxiliary vector entry `type` of this process, from the calling thread's `auxv`
/// (`getauxval` is not exposed by the Glibc module; `/proc/self/auxv` is empty once the main
/// thread has ended by pthread_exit).
func auxiliaryValue(_ type: UInt) -> UInt? {
    guard let bytes = FileIO.readBytes("/proc/thread-self/auxv") else { return nil }
    let wordSize = MemoryLayout<UInt>.size
    return bytes.withUnsafeBytes { raw -> UInt? in
        var offset = 0
        while offset + 2 * wordSize <= raw.count {
            let key = raw.loadUnaligned(fromByteOffset: offset, as: UInt.self)
            if key == 0 { return nil }  // AT_NULL
            if key == type { return raw.loadUnaligned(fromByteOffset: offset + wordSize, as: UInt.self) }
            offset += 2 * wordSize
        }
        return nil
    }
}
