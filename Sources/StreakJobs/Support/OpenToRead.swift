import Foundation

/// Opening a file to read that may be a named pipe (a FIFO): `open` waits for a writer, forever
/// when none comes (`--config FIFO` and `import FIFO` hung, issue 31). It opens without waiting
/// (`O_NONBLOCK`), and a pipe or socket is then given `patience` for a writer's first bytes (or
/// its end); a regular file or a device is read at once. What it answers reads as usual
/// (blocking).
enum OpenToRead {
    /// Why the file could not be opened: `missing` (ENOENT), or a sentence.
    enum Failure: Error {
        case missing
        case folder
        case cannot(String)
        case noWriter(Duration)
    }

    static let patience = Duration.seconds(10)

    static func open(_ path: String, patience: Duration = OpenToRead.patience) throws(Failure) -> FileHandle {
        let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .missing }
            throw .cannot(String(cString: strerror(errno)))
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw .cannot(reason)
        }
        let type = info.st_mode & S_IFMT
        if type == S_IFDIR {
            close(fd)
            throw .folder
        }
        if type == S_IFIFO || type == S_IFSOCK {
            // Data, or a writer that came and went (POLLHUP), within `patience`; else nobody writes.
            var watch = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let (seconds, attoseconds) = patience.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
            var ready: Int32
            repeat { ready = poll(&watch, 1, milliseconds) } while ready < 0 && errno == EINTR
            guard ready > 0 else {
                close(fd)
                throw .noWriter(patience)
            }
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }
}
