import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Where tests put their files: one folder of this process's in the temporary directory,
/// `streakd-tests.PID`, removed when the process exits. A folder that a killed or crashed run
/// left behind (its process gone) is removed when the next run first asks for a path. Before,
/// each `swift test` left its SQLite stores and generated files behind: 15 GB in /tmp after two
/// days of runs on one machine.
public enum TestFiles {
    /// A fresh path under this process's folder, `NAME-UUID` (nothing is made there).
    public static func path(_ name: String) -> String {
        (root as NSString).appendingPathComponent("\(name)-\(UUID().uuidString)")
    }

    /// A fresh folder under this process's folder, made.
    public static func folder(_ name: String) throws -> String {
        let made = path(name)
        try FileManager.default.createDirectory(atPath: made, withIntermediateDirectories: true)
        return made
    }

    /// This process's folder.
    public static let root: String = {
        let parent = NSTemporaryDirectory()
        removeLeftovers(in: parent)
        let root = (parent as NSString).appendingPathComponent("\(prefix)\(getpid())")
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestFiles.root) }
        return root
    }()

    static let prefix = "streakd-tests."

    /// Removes the folders in `parent` whose process is gone; returns their names.
    @discardableResult
    public static func removeLeftovers(in parent: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent)) ?? []
        var removed: [String] = []
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid > 0 else { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            if (try? FileManager.default.removeItem(atPath: (parent as NSString).appendingPathComponent(name))) != nil {
                removed.append(name)
            }
        }
        return removed
    }
}
