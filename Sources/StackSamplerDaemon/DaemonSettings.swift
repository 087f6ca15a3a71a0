import Glibc
import StackSampler

/// The daemon's settings from the environment (`SessionSettings` names them): continuous
/// windows, the files kept, the listen address and request bound, the push back end.
package struct DaemonSettings: Sendable {
    /// Continuous mode's window length (`STACKSAMPLER_CONTINUOUS`); with a push back end and no
    /// window given, `defaultPushWindow`.
    package var window: Duration?
    /// Window files kept when outputs rotate (`%t`); nil keeps them all.
    package var keep: Int?
    /// The listen address as given (`STACKSAMPLER_LISTEN`), nil for the default socket only.
    package var listen: String?
    /// The longest profile one request may ask for, in seconds.
    package var maxRequestSeconds: Int
    /// The push back end (`STACKSAMPLER_PUSH`), if any.
    package var pushURL: String?

    /// Windows pushed when no window length is given: a minute, as continuous profilers commonly cut.
    package static let defaultPushWindow = Duration.seconds(60)

    /// Whether any daemon setting is given: the process then runs the daemon.
    package var isActive: Bool { window != nil || listen != nil || pushURL != nil }

    /// Reads the settings (an empty variable counts as unset); a bad value is an error that names the variable and what it accepts.
    package static func fromEnvironment(_ environment: SettingEnvironment = .process) throws(SettingError) -> DaemonSettings {
        var settings = DaemonSettings(window: try environment.value(SessionSettings.continuous), keep: try environment.value(SessionSettings.keep),
                                      listen: try environment.value(SessionSettings.listen),
                                      maxRequestSeconds: try environment.value(SessionSettings.maxRequestSeconds)
                                          ?? SessionSettings.maxRequestSeconds.defaultValue!,
                                      pushURL: try environment.value(SessionSettings.push))
        if settings.pushURL != nil, settings.window == nil { settings.window = defaultPushWindow }
        return settings
    }

    /// Whether `STACKSAMPLER_OUTPUT` names a file per window (`%t`).
    package static func rotates(_ path: String) -> Bool { path.replacingStamp(with: "") != path }
}
