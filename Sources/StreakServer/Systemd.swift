import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// What `streakd serve` asks of the service manager (SPEC §11), through libsystemd's sd-daemon:
/// the sockets of socket activation, and `Type=notify`'s messages. Outside systemd each is
/// nothing: no sockets, notifications not sent.
public enum Systemd {
    /// A listening socket systemd passed (`LISTEN_FDS`), with its name (`FileDescriptorName=`,
    /// else "unknown"). Taken once: the environment variables are removed, so that a child
    /// process never takes them too.
    public struct Socket: Sendable {
        public var descriptor: Int32
        public var name: String
    }

    public static func inheritedSockets() -> [Socket] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        // sd_listen_fds checks LISTEN_PID against this process and marks the descriptors close-on-exec.
        let count = sd_listen_fds_with_names(1, &names)
        guard count > 0 else { return [] }
        defer {
            for i in 0..<Int(count) { free(names?[i]) }
            free(names)
        }
        return (0..<count).map { i in
            Socket(
                descriptor: SD_LISTEN_FDS_START + i,
                name: names?[Int(i)].map { String(cString: $0) } ?? "unknown")
        }
    }

    /// Tells the service manager `state` (`READY=1`, `STOPPING=1`, `WATCHDOG=1`); nothing
    /// without `NOTIFY_SOCKET`.
    public static func notify(_ state: String) {
        _ = sd_notify(0, state)
    }

    /// How often the watchdog wants to hear from the service (`WatchdogSec=`, half of it, as
    /// sd_watchdog_enabled(3) advises), or nil when it is not enabled for this process.
    public static func watchdogInterval() -> Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec / 2))
    }
}
