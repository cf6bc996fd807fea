import CSystemd
import Foundation

/// The sd-bus calls of the desktop sink. sd-bus's convenience functions are variadic, which Swift
/// cannot call: messages are built one argument at a time with `sd_bus_message_append_basic` and
/// `sd_bus_message_open_container`.
enum SessionBus {
    /// A failed sd-bus call: its negative errno and, for method calls, the D-Bus error.
    struct Failure: Error, Equatable {
        var code: Int32
        var name: String?
        var text: String

        init(code: Int32, name: String? = nil, text: String? = nil) {
            self.code = code
            self.name = name
            self.text = text ?? String(cString: strerror(-code))
        }
    }

    /// Connects to `address`, or to the user's session bus (`DBUS_SESSION_BUS_ADDRESS`, else
    /// `$XDG_RUNTIME_DIR/bus`), and waits until the bus has answered Hello, but not past `deadline`.
    static func connect(address: String?, until deadline: ContinuousClock.Instant) -> Result<OpaquePointer, Failure> {
        var bus: OpaquePointer?
        var result: Int32
        if let address {
            result = sd_bus_new(&bus)
            if result >= 0 { result = address.withCString { sd_bus_set_address(bus, $0) } }
            if result >= 0 { result = sd_bus_set_bus_client(bus, 1) }
            if result >= 0 { result = sd_bus_start(bus) }
        } else {
            result = sd_bus_open_user(&bus)
        }
        guard result >= 0, let bus else {
            sd_bus_close_unref(bus)
            if address == nil && result == -ENOMEDIUM {
                return .failure(Failure(code: result, text: "DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR are unset"))
            }
            let environment = ProcessInfo.processInfo.environment
            let target =
                address ?? environment["DBUS_SESSION_BUS_ADDRESS"]
                ?? "unix:path=\(environment["XDG_RUNTIME_DIR"] ?? "$XDG_RUNTIME_DIR")/bus"
            return .failure(
                Failure(code: result, text: "cannot connect to \(target): \(String(cString: strerror(-result)))"))
        }
        // sd_bus_call would wait for the Hello reply (or the authentication) without a time limit of ours.
        while sd_bus_is_ready(bus) <= 0 {
            let left = ContinuousClock.now.duration(to: deadline)
            if left <= .zero {
                sd_bus_close_unref(bus)
                return .failure(Failure(code: -ETIMEDOUT, text: "the bus did not answer in time"))
            }
            result = sd_bus_process(bus, nil)
            if result == 0 { result = sd_bus_wait(bus, microseconds(left)) }
            if result == -EINTR { continue }
            if result < 0 || sd_bus_is_open(bus) <= 0 {
                sd_bus_close_unref(bus)
                let code = result < 0 ? result : -ECONNRESET
                return .failure(
                    Failure(code: code, text: "the bus closed the connection: \(String(cString: strerror(-code)))"))
            }
        }
        return .success(bus)
    }

    /// Closes a connection; writes out what is queued only when it is up (flushing waits for the bus).
    static func close(_ bus: OpaquePointer) {
        if sd_bus_is_ready(bus) > 0 {
            sd_bus_flush_close_unref(bus)
        } else {
            sd_bus_close_unref(bus)
        }
    }

    /// Handles what has arrived on a kept connection since its last call (notification servers send
    /// their NotificationClosed signals to the client): sd-bus drops it, instead of queueing it for
    /// good. It also notices a connection the other end has closed.
    static func drain(_ bus: OpaquePointer) {
        while sd_bus_process(bus, nil) > 0 {}
    }

    /// Calls org.freedesktop.Notifications.Notify and waits for the reply until `deadline`.
    static func notify(_ bus: OpaquePointer, _ message: DesktopMessage, until deadline: ContinuousClock.Instant)
        -> Failure?
    {
        var call: OpaquePointer?
        var result = sd_bus_message_new_method_call(
            bus, &call, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
            "org.freedesktop.Notifications", "Notify")
        guard result >= 0, let call else { return Failure(code: result) }
        defer { sd_bus_message_unref(call) }
        result = append(message, to: call)
        if result < 0 {
            return Failure(code: result, text: "cannot build the call: \(String(cString: strerror(-result)))")
        }

        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer?
        let left = max(ContinuousClock.now.duration(to: deadline), .milliseconds(1))
        result = sd_bus_call(bus, call, microseconds(left), &error, &reply)
        sd_bus_message_unref(reply)
        if result >= 0 { return nil }
        return Failure(
            code: result, name: error.name.map { String(cString: $0) }, text: error.message.map { String(cString: $0) })
    }

    /// Appends the arguments of Notify, signature `susssasa{sv}i`; returns the first negative errno.
    static func append(_ message: DesktopMessage, to call: OpaquePointer) -> Int32 {
        var writer = Writer(call: call)
        writer.string(message.appName)
        writer.basic("u", UInt32(0))  // replaces_id
        writer.string(message.appIcon)
        writer.string(message.summary)
        writer.string(message.body)
        writer.open("a", "s")  // no actions
        writer.close()
        writer.open("a", "{sv}")
        writer.hint("urgency", "y") { $0.basic("y", message.urgency.rawValue) }
        writer.hint("category", "s") { $0.string(message.category) }
        writer.close()
        writer.basic("i", message.expireTimeout)
        return writer.result
    }

    /// Appends to a message, stopping at the first error.
    struct Writer {
        let call: OpaquePointer
        var result: Int32 = 0

        mutating func string(_ value: String) {
            guard result >= 0 else { return }
            result = value.withCString { sd_bus_message_append_basic(call, type("s"), $0) }
        }

        mutating func basic<Value>(_ code: Unicode.Scalar, _ value: Value) {
            guard result >= 0 else { return }
            var value = value
            result = withUnsafePointer(to: &value) { sd_bus_message_append_basic(call, type(code), $0) }
        }

        mutating func open(_ code: Unicode.Scalar, _ contents: String) {
            guard result >= 0 else { return }
            result = contents.withCString { sd_bus_message_open_container(call, type(code), $0) }
        }

        mutating func close() {
            guard result >= 0 else { return }
            result = sd_bus_message_close_container(call)
        }

        /// One `{sv}` entry of the hints dictionary.
        mutating func hint(_ key: String, _ signature: String, _ value: (inout Writer) -> Void) {
            open("e", "sv")
            string(key)
            open("v", signature)
            value(&self)
            close()
            close()
        }

        private func type(_ code: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: code)) }
    }

    static func microseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(seconds, 0)) * 1_000_000 + UInt64(max(attoseconds, 0) / 1_000_000_000_000)
    }
}
