import Glibc

/// Reads a whole file with plain `read(2)` (works for procfs files, whose size is reported as 0).
func readWholeFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var result: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            return nil
        }
        if count == 0 { return result }
        result.append(contentsOf: chunk[0..<count])
    }
}

/// The value of auxiliary vector entry `type` of this process, from `/proc/self/auxv`
/// (`getauxval` is not exposed by the Glibc module).
func auxiliaryValue(_ type: UInt) -> UInt? {
    guard let bytes = readWholeFile("/proc/self/auxv") else { return nil }
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
