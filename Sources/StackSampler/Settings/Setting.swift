/// One setting of a profiling session as every front end spells it: the preload library's
/// environment variable, the `record` command's option, what it accepts, and what is said of a
/// value it does not accept. The table of them is `SessionSettings`.
package struct Setting<Value: Sendable>: Sendable {
    /// The preload library's environment variable, e.g. `STACKSAMPLER_PERIOD`.
    package let variable: String
    /// The `record` command's option, e.g. `--period`.
    package let option: String
    /// What a value is, for messages: "a sampling period".
    let noun: String
    /// What to give instead of a bad value: "a number with a unit such as 10ms, 500us or 1s".
    let expected: String
    let parser: @Sendable (String) -> Value?
    let accepts: @Sendable (Value) -> Bool

    init(variable: String, option: String, noun: String, expected: String,
         parser: @escaping @Sendable (String) -> Value?, accepts: @escaping @Sendable (Value) -> Bool = { _ in true }) {
        self.variable = variable
        self.option = option
        self.noun = noun
        self.expected = expected
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
    func check(_ value: Value, shown: String) throws(SettingError) {
        guard accepts(value) else { throw SettingError(description: "\(shown) is not \(noun); use \(expected)") }
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
