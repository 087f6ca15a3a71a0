import Glibc
import StackSampler

/// Why pushing cannot start: the message says what was given and what to give.
package enum PushError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A setting, or a combination of settings, that cannot be used.
    case invalid(String)
    /// The push thread could not be started.
    case cannotStart(String)

    package var description: String {
        switch self {
        case .invalid(let message): message
        case .cannotStart(let reason): "cannot start the push thread: \(reason)"
        }
    }
}

/// How pushes authenticate.
package enum PushCredentials: Sendable, Equatable {
    /// No Authorization header.
    case none
    /// `Authorization: Basic …` of `user:password`.
    case basic(user: String, password: String)
    /// `Authorization: Bearer TOKEN`.
    case bearer(String)
    /// Read from this file at each push (so a rotated secret is picked up): `USER:PASSWORD` for
    /// basic authentication, else a bearer token; surrounding white space ignored.
    case file(String)

    /// The Authorization header for these credentials; a `.file` that cannot be read is an error.
    package func authorizationHeader() throws(PushError) -> String? {
        switch self {
        case .none: return nil
        case .basic(let user, let password): return "Basic \(Base64.encoded(Array("\(user):\(password)".utf8)))"
        case .bearer(let token): return "Bearer \(token)"
        case .file(let path):
            guard let text = FileIO.readText(path, limit: 65536)?.trimmingSpaces else {
                throw .invalid("cannot read the push credentials file \(path): \(String(cString: strerror(errno)))")
            }
            guard !text.isEmpty else { throw .invalid("the push credentials file \(path) is empty") }
            return try PushCredentials.parsed(text, source: path).authorizationHeader()
        }
    }

    /// `USER:PASSWORD` as basic credentials, anything else as a bearer token.
    static func parsed(_ text: String, source: String) -> PushCredentials {
        guard let colon = text.firstIndex(of: ":") else { return .bearer(text) }
        return .basic(user: String(text[..<colon]), password: String(text[text.index(after: colon)...]))
    }
}

/// The push settings of a process, from `SessionSettings`' variables: `STACKSAMPLER_PUSH` (the
/// back end), `STACKSAMPLER_APP_NAME`, `STACKSAMPLER_PUSH_TENANT`, `STACKSAMPLER_PUSH_BASIC_AUTH`,
/// `STACKSAMPLER_PUSH_TOKEN`, `STACKSAMPLER_PUSH_CREDENTIALS_FILE`, `STACKSAMPLER_PUSH_QUEUE`.
package struct PushSettings: Sendable, Equatable {
    /// The back end's URL (`http://` or `https://`); `/ingest` is appended.
    package var url: String
    /// The application name and labels; nil: the process's name, made acceptable.
    package var appName: PyroscopeAppName?
    /// Sent as `X-Scope-OrgID`.
    package var tenant: String?
    /// How pushes authenticate.
    package var credentials: PushCredentials
    /// Windows waiting at most; the oldest is dropped for a new one beyond it.
    package var queueLength: Int

    /// Settings for pushing to `url`.
    package init(url: String, appName: PyroscopeAppName? = nil, tenant: String? = nil, credentials: PushCredentials = .none,
                queueLength: Int = SessionSettings.pushQueue.defaultValue!) {
        self.url = url
        self.appName = appName
        self.tenant = tenant
        self.credentials = credentials
        self.queueLength = queueLength
    }

    /// The settings in the environment; nil when `STACKSAMPLER_PUSH` is unset or empty (no push).
    /// The error names the variable and what it takes.
    package static func fromEnvironment() throws(PushError) -> PushSettings? {
        try read(SettingEnvironment.process.text)
    }

    /// The settings from `variable` (the environment's lookup, or a table in tests); an empty
    /// variable counts as unset (`SettingEnvironment`).
    package static func read(_ variable: @escaping (String) -> String?) throws(PushError) -> PushSettings? {
        func value<Value>(_ setting: Setting<Value>) throws(PushError) -> Value? {
            do { return try SettingEnvironment(variable).value(setting) } catch { throw .invalid(error.description) }
        }
        guard let url = try value(SessionSettings.push) else { return nil }
        var settings = PushSettings(url: url)
        if let name = try value(SessionSettings.appName) {
            do { settings.appName = try PyroscopeAppName(parsing: name) } catch {
                throw .invalid("\(SessionSettings.appName.variable)=\(name): \(error.description)")
            }
        }
        if let tenant = try value(SessionSettings.pushTenant) { settings.tenant = tenant }
        let basic = try value(SessionSettings.pushBasicAuth)
        let token = try value(SessionSettings.pushToken)
        let file = try value(SessionSettings.pushCredentialsFile)
        let given = [(SessionSettings.pushBasicAuth.variable, basic != nil), (SessionSettings.pushToken.variable, token != nil),
                     (SessionSettings.pushCredentialsFile.variable, file != nil)].filter(\.1).map(\.0)
        guard given.count <= 1 else {
            throw .invalid("\(given.joined(separator: " and ")) are both set; give the push credentials one way only")
        }
        if let basic { settings.credentials = PushCredentials.parsed(basic, source: SessionSettings.pushBasicAuth.variable) }
        if let token { settings.credentials = .bearer(token) }
        if let file { settings.credentials = .file(file) }
        if let queue = try value(SessionSettings.pushQueue) { settings.queueLength = queue }
        return settings
    }
}
