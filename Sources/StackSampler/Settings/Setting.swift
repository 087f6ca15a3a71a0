/// One setting of a profiling session as every front end spells it: the preload library's
/// environment variable, the `record` command's option, its default, what it accepts, and what
/// is said of a value it does not accept. The table of them is `SessionSettings`.
@usableFromInline
package struct Setting<Value: Sendable>: Sendable {
    /// The preload library's environment variable, e.g. `STACKSAMPLER_PERIOD`.
    package let variable: String
    /// The `record` command's option, e.g. `--period`.
    package let option: String
    /// The value when the setting is not given; nil when leaving it out means something of its
    /// own (no output, no push, no event).
    @usableFromInline
    package let defaultValue: Value?
    /// The accepted values in words, for help texts: "from 50us to 60s"; nil when any value the
    /// parser reads is accepted.
    package let range: String?
    /// What a value is, for messages: "a sampling period".
    let noun: String
    /// What to give instead of a bad value: "a number with a unit such as 10ms, 500us or 1s, from 50us to 60s".
    package let expected: String
    let parser: @Sendable (String) -> Value?
    let accepts: @Sendable (Value) -> Bool

    init(variable: String, option: String, noun: String, expected: String, default defaultValue: Value? = nil,
         range: String? = nil, parser: @escaping @Sendable (String) -> Value?,
         accepts: @escaping @Sendable (Value) -> Bool = { _ in true }) {
        self.variable = variable
        self.option = option
        self.noun = noun
        self.expected = expected
        self.defaultValue = defaultValue
        self.range = range
        self.parser = parser
        self.accepts = accepts
    }

    /// `text` as a value; the error names where it came from and what to give instead.
    package func parse(_ text: String, from source: SettingSource) throws(SettingError) -> Value {
        guard let value = parser(text), accepts(value) else {
            let given = source == .environment ? "\(variable)=\(text)" : "\(option) \(text)"
            throw SettingError(description: "\(given) is not \(noun); use \(expected)")
        }
        return value
    }

    /// Checks a value given through the API, `shown` as the message should show it.
    package func check(_ value: Value, shown: String) throws(SettingError) {
        guard accepts(value) else { throw SettingError(description: "\(shown) is not \(noun); use \(expected)") }
    }
}

extension Setting where Value == Int {
    /// A whole number in `range`; the message asks for `kind` ("a whole number") and says the range.
    init(variable: String, option: String, noun: String, kind: String, in range: ClosedRange<Int>, default defaultValue: Int? = nil) {
        let words = "from \(range.lowerBound) to \(range.upperBound)"
        self.init(variable: variable, option: option, noun: noun, expected: "\(kind) \(words)", default: defaultValue, range: words,
                  parser: { Int($0) }, accepts: { range.contains($0) })
    }

    /// A whole number of at least `range`'s bound; the message asks for `kind` and says the bound.
    init(variable: String, option: String, noun: String, kind: String, in range: PartialRangeFrom<Int>, default defaultValue: Int? = nil) {
        let words = "of at least \(range.lowerBound)"
        self.init(variable: variable, option: option, noun: noun, expected: "\(kind) \(words)", default: defaultValue, range: words,
                  parser: { Int($0) }, accepts: { range.contains($0) })
    }
}

extension Setting where Value == Duration {
    /// A duration with a unit (`PeriodParser`) in `range`; the message gives `examples` and the range.
    init(variable: String, option: String, noun: String, examples: String, in range: ClosedRange<Duration>,
         default defaultValue: Duration? = nil) {
        let words = "from \(PeriodParser.format(range.lowerBound)) to \(PeriodParser.format(range.upperBound))"
        self.init(variable: variable, option: option, noun: noun, expected: "\(examples), \(words)", default: defaultValue, range: words,
                  parser: { try? PeriodParser.parseDuration($0) }, accepts: { range.contains($0) })
    }
}

/// Where a setting's text came from.
package enum SettingSource: Sendable {
    /// The preload library's environment variable.
    case environment
    /// The `record` command's option.
    case commandLine
}

/// A setting's value that cannot be used, with the message that says why and what to give.
package struct SettingError: Error, CustomStringConvertible, Sendable {
    /// The message: what was given, and what to give instead.
    package let description: String

    /// An error with this message.
    package init(description: String) {
        self.description = description
    }
}
