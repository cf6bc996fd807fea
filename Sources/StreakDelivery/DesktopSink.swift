import CSystemd
import Foundation
import StreakCore
import Synchronization

/// The desktop sink (SPEC §5): org.freedesktop.Notifications.Notify on the session bus, through
/// sd-bus, for the streakd users configured to this desktop. No bus or no notification server is
/// `.unavailable` (a warning, never retried); other bus errors are `.failed`.
public final class DesktopSink: Sink {
    public let name = "desktop"
    public let users: Set<String>
    /// A D-Bus address (`unix:path=...`); `nil` is the user's session bus.
    public let address: String?
    /// Seconds one delivery may take, connecting included.
    public let timeout: Double
    /// The sd-bus connection, opened on the first delivery and kept; one delivery at a time uses it.
    private let bus = Mutex<OpaquePointer?>(nil)

    /// D-Bus errors that mean nobody serves org.freedesktop.Notifications (or it does not answer).
    static let noServerErrors: Set<String> = [
        "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
        "org.freedesktop.DBus.Error.TimedOut",
    ]

    public init(users: Set<String>, address: String? = nil, timeout: Double = 5) {
        self.users = users
        self.address = address
        self.timeout = timeout
    }

    deinit {
        bus.withLock { Self.disconnect(&$0) }
    }

    public func accepts(_ notification: Notification) -> Bool {
        users.contains(notification.user)
    }

    public func deliver(_ notification: Notification) -> DeliveryOutcome {
        if !accepts(notification) { return .delivered }
        let message = DesktopMessage(notification)
        let deadline = ContinuousClock.now + .milliseconds(Int64(max(timeout, 0) * 1000))
        return bus.withLock { send(message, until: deadline, on: &$0) }
    }

    private func send(
        _ message: DesktopMessage, until deadline: ContinuousClock.Instant, on bus: inout OpaquePointer?
    ) -> DeliveryOutcome {
        if let kept = bus {
            SessionBus.drain(kept)
            if sd_bus_is_open(kept) <= 0 { Self.disconnect(&bus) }
        }
        // A kept connection can still turn out closed when the call is written: then one try on a new one.
        var retry = bus != nil
        while true {
            let current: OpaquePointer
            if let bus {
                current = bus
            } else {
                switch SessionBus.connect(address: address, until: deadline) {
                case .success(let opened): current = opened
                case .failure(let failure): return .unavailable("no session bus: \(failure.text)")
                }
                bus = current
            }
            guard let failure = SessionBus.notify(current, message, until: deadline) else { return .delivered }
            if sd_bus_is_open(current) > 0 { return outcome(failure) }
            Self.disconnect(&bus)
            if !retry { return .unavailable("no session bus: the bus closed the connection: \(failure.text)") }
            retry = false
        }
    }

    private static func disconnect(_ bus: inout OpaquePointer?) {
        if let open = bus { SessionBus.close(open) }
        bus = nil
    }

    /// What a failed Notify call means for the delivery.
    func outcome(_ failure: SessionBus.Failure) -> DeliveryOutcome {
        let name = failure.name ?? ""
        if failure.code == -ETIMEDOUT {
            return .unavailable(
                "no notification server on the session bus: no reply within \(HookSink.seconds(timeout))s")
        }
        if Self.noServerErrors.contains(name) || name.hasPrefix("org.freedesktop.DBus.Error.Spawn.") {
            return .unavailable("no notification server on the session bus: \(failure.text)")
        }
        return .failed("Notify: " + (failure.name.map { "\($0): " } ?? "") + failure.text)
    }
}
