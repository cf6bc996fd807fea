/// The exit codes of SPEC §6 (sysexits.h).
public enum ExitStatus: Int32, Sendable {
    case success = 0
    case usage = 64
    case dataError = 65
    case noInput = 66
    case unavailable = 69
    case damaged = 74
    case tempFail = 75
    case noPermission = 77
    case config = 78
}

/// An error meant for a person: what is wrong, where, and what would be valid.
public struct StreakdError: Error, CustomStringConvertible, Sendable {
    public var status: ExitStatus
    public var message: String

    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { message }

    public static func data(_ message: String) -> StreakdError { StreakdError(.dataError, message) }
    public static func usage(_ message: String) -> StreakdError { StreakdError(.usage, message) }
    public static func config(_ message: String) -> StreakdError { StreakdError(.config, message) }

    public static func unknownUser(_ id: String) -> StreakdError { .data(UnknownUser.command.message(id)) }
}

/// What a message about an unknown user says to do first: run the command that adds one, or,
/// to an app talking to the API, send the request that does.
enum UnknownUser: Sendable {
    case command, request

    func message(_ id: String) -> String {
        switch self {
        case .command: "unknown user \(quoted(id)); add it first with: streakd user add \(id) --tz ZONE"
        case .request:
            "unknown user \(quoted(id)); add it first with PUT /v1/users/\(id) and a body such as "
                + "{\"tz\":\"Europe/Berlin\"} (a token of scope admin)"
        }
    }
}

/// Quotes a value for an error message, cutting absurdly long ones.
func quoted(_ s: String) -> String {
    let cut = s.count > 80 ? String(s.prefix(77)) + "..." : s
    var out = "\""
    for ch in cut.unicodeScalars {
        switch ch {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case _ where ch.value < 32 || ch.value == 127: out += "\\u{\(String(ch.value, radix: 16))}"
        default: out.unicodeScalars.append(ch)
        }
    }
    return out + "\""
}
