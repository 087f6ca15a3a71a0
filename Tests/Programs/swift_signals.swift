// swift_signals: a Swift program prints `caught MASK`, the SigCgt mask of /proc/self/status (hex):
// the signals its process has handlers for, the Swift runtime's crash backtracer's among them.
//
// Build: swiftc -O -o swift_signals swift_signals.swift
import Glibc

guard let status = fopen("/proc/self/status", "r") else { exit(2) }
var line = [CChar](repeating: 0, count: 256)
while fgets(&line, Int32(line.count), status) != nil {
    let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if text.hasPrefix("SigCgt:") { print("caught " + text.dropFirst(7).trimmingPrefix(while: \.isWhitespace), terminator: "") }
}
fclose(status)
