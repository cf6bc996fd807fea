import Foundation
import StreakCore
import StreakDelivery

/// Names the run that is delivering a notification, so that a later run can tell a delivery in
/// progress from one left behind by a run that died: `host:pid:start-ticks:claimed-at`.
enum RunOwner {
    static func token(now: Instant) -> String {
        let pid = getpid()
        return "\(hostName):\(pid):\(startTicks(pid) ?? "0"):\(now.seconds)"
    }

    /// Whether the run that holds a claim is known to be gone: on this host, its process has ended
    /// (or its pid was reused). Of a run on another host nothing is known here: its lease decides.
    static func isGone(_ owner: String) -> Bool {
        let parts = owner.split(separator: ":").map(String.init)
        guard parts.count == 4, let pid = Int32(parts[1]) else { return true }
        guard parts[0] == hostName else { return false }
        return startTicks(pid) != parts[2]
    }

    /// Ends the hooks a run gone from this host left running (it was killed), before its
    /// deliveries are taken over; answers how many hooks were ended.
    static func endHooksLeftBehind(by owner: String) -> Int {
        let parts = owner.split(separator: ":").map(String.init)
        guard parts.count == 4, parts[0] == hostName, let pid = Int32(parts[1]), pid != getpid() else { return 0 }
        return HooksLeftBehind.end(byProcess: pid, started: parts[2])
    }

    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .replacingOccurrences(of: ":", with: "_")
    }()

    /// Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
    static func startTicks(_ pid: Int32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }
}
