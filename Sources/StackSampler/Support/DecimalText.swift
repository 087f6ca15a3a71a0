/// Fixed-point printing of a Double without Foundation (`12.35` for 12.345 at 2 decimals).
func decimalText(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return value.description }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = Int64((abs(value) * scale).rounded())
    let whole = scaled / Int64(scale)
    let fraction = scaled % Int64(scale)
    let sign = value < 0 && scaled != 0 ? "-" : ""
    guard decimals > 0 else { return "\(sign)\(whole)" }
    let digits = String(fraction)
    return "\(sign)\(whole)." + String(repeating: "0", count: decimals - digits.count) + digits
}
