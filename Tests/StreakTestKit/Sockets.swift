import Glibc

/// A unix socket bound at `path` and listening, whose connections are never accepted: connecting
/// works, and a D-Bus client's authentication never ends (a hung session bus).
public func listeningSocket(_ path: String) -> Int32? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, listen(fd, 64) == 0 else {
        close(fd)
        return nil
    }
    return fd
}

/// A TCP socket on a loopback port the kernel chooses, and the port: with `listening`, it takes
/// connections and never accepts them (a receiver that never answers); without, close it for a
/// port nobody listens on.
public func loopbackSocket(listening: Bool) -> (fd: Int32, port: Int)? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound, !listening || listen(fd, 16) == 0 else {
        close(fd)
        return nil
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}

/// A Python program that double-forks a daemon leaving its session and its environment
/// (`os.execve` with none), which writes its pid to the file named by its first argument; the
/// program returns once the pid is written.
public let pythonDoubleForkDaemon = """
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve("/bin/sh", ["sh", "-c", 'echo $$ > "$0"; exec /bin/sleep 30', sys.argv[1]], {})
        os._exit(0)
    while not (os.path.exists(sys.argv[1]) and os.path.getsize(sys.argv[1]) > 0):
        time.sleep(0.01)
    """
