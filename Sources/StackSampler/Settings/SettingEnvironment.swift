import Glibc

/// Environment variables as every front end reads settings from them: the preload library and
/// the daemon from their process's environment, `stacksampler` from a profiled process's
/// (`/proc/PID/environ`), tests from a table.
///
/// One rule for all of them: a variable set to the empty string counts as unset, so its
/// setting takes its default. `export STACKSAMPLER_PERIOD=` or `STACKSAMPLER_PUSH= ./app` is how
/// a script or a container file blanks a variable it cannot remove; OpenTelemetry's SDKs read
/// their variables the same way, and the preload library's constructor, which decides whether a
/// process is profiled at all, never took an empty variable as set.
package struct SettingEnvironment {
    private let lookup: (String) -> String?

    /// The variables `lookup` gives (nil for an unset variable).
    package init(_ lookup: @escaping (String) -> String?) {
        self.lookup = lookup
    }

    /// The variables of a table.
    package init(_ variables: [String: String]) {
        self.init { variables[$0] }
    }

    /// This process's environment, read at each lookup.
    package static var process: SettingEnvironment {
        SettingEnvironment { getenv($0).map { String(cString: $0) } }
    }

    /// The text of variable `name`; nil when it is unset or empty.
    package func text(_ name: String) -> String? {
        guard let text = lookup(name), !text.isEmpty else { return nil }
        return text
    }

    /// `setting`'s value; nil when its variable is unset or empty. A value the setting does not
    /// accept is an error naming the variable and what to give.
    package func value<Value>(_ setting: Setting<Value>) throws(SettingError) -> Value? {
        guard let text = text(setting.variable) else { return nil }
        return try setting.parse(text, from: .environment)
    }
}
