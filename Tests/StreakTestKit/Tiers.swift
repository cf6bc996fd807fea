import Foundation
import Testing

/// The tests' two tiers (README, "Tests"). `swift test` alone runs the fast tier: the rules, the
/// store, the sinks and the command line, in process or with short-lived children, a few minutes
/// on two cores. The system tier needs the machine as a whole or a long time (journald bursts,
/// several hosts, a `systemd --user` manager, the fault campaign, every zone against Foundation);
/// it runs only with `STREAKD_TEST_TIER=system`, which scripts/test (and so CI) sets. Elsewhere
/// each of its suites shows as skipped, saying why.
public enum TestTier {
    /// `STREAKD_TEST_TIER=system`: the system tier runs too.
    public static let system = ProcessInfo.processInfo.environment["STREAKD_TEST_TIER"] == "system"

    /// `STREAKD_TEST_STRICT=1` (.ci/run sets it) or `CI=true`: a missing prerequisite fails the
    /// test instead of skipping it.
    public static let strict: Bool = {
        let environment = ProcessInfo.processInfo.environment
        return ["1", "true", "yes"].contains(environment["STREAKD_TEST_STRICT"]?.lowercased() ?? "")
            || ["1", "true", "yes"].contains(environment["CI"]?.lowercased() ?? "")
    }()

    // swift-testing starts a test's clock when it schedules the test, and a parallel run schedules
    // every test at its start; the tests' bodies are synchronous and share two threads on two
    // cores. So a limit bounds a test's end from the start of its pass, not its own time: it must
    // exceed the pass (the fast tier's about six minutes on two loaded cores, the system tier's
    // about twelve) and stay under the pass's deadline in scripts/test (25 and 45 minutes).

    /// The time limit of each test of the fast tier, from the start of its pass.
    public static let fastLimit = TimeLimitTrait.Duration.minutes(15)
    /// The time limit of each test of the system tier, from the start of its pass.
    public static let systemLimit = TimeLimitTrait.Duration.minutes(30)
}

extension Trait where Self == TimeLimitTrait {
    /// Every suite of the fast tier carries this: a test that hangs fails instead.
    public static var fastTier: Self { .timeLimit(TestTier.fastLimit) }
}

extension Trait where Self == ConditionTrait {
    /// A suite (or test) of the system tier, needing what `why` says: skipped, saying so,
    /// unless `STREAKD_TEST_TIER=system`. Give it `.timeLimit(TestTier.systemLimit)` too.
    public static func systemTier(_ why: String, sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        .enabled(
            if: TestTier.system,
            Comment(rawValue: "system tier (\(why)); STREAKD_TEST_TIER=system runs it, as scripts/test and CI do"),
            sourceLocation: sourceLocation)
    }

    /// Runs only where every prerequisite is met. A missing one skips the suite or test with its
    /// reason, or, when strict (CI), fails it with that reason.
    public static func requires(_ needs: Prerequisite..., sourceLocation: SourceLocation = #_sourceLocation) -> Self {
        let missing = Prerequisite.all(needs).missing
        return .enabled(Comment(rawValue: "needs \(missing ?? "nothing missing")"), sourceLocation: sourceLocation) {
            guard let missing else { return true }
            if TestTier.strict { throw MissingPrerequisite(what: missing) }
            return false
        }
    }
}

/// What a test needs of the machine: nil when it is here, else what is missing and how to get it.
public struct Prerequisite: Sendable {
    public let missing: String?

    public init(missing: String?) { self.missing = missing }

    /// Inside a test: goes on when met; else cancels the test, with a warning that says what is
    /// missing (swift-testing shows a cancelled test case as passed), or, when strict, fails it.
    public func require(sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard let missing else { return }
        if TestTier.strict { throw MissingPrerequisite(what: missing) }
        Issue.record(Comment(rawValue: "skipped: needs \(missing)"), severity: .warning, sourceLocation: sourceLocation)
        try Test.cancel(Comment(rawValue: "needs \(missing)"), sourceLocation: sourceLocation)
    }

    /// All of them: what each missing one lacks.
    public static func all(_ list: [Prerequisite]) -> Prerequisite {
        let missing = list.compactMap(\.missing)
        return Prerequisite(missing: missing.isEmpty ? nil : missing.joined(separator: "; "))
    }

    /// An executable at `path`, from the Debian package `package`.
    public static func program(_ path: String, package: String) -> Prerequisite {
        FileManager.default.isExecutableFile(atPath: path)
            ? Prerequisite(missing: nil)
            : Prerequisite(missing: "\(path) (Debian package \(package); scripts/install-deps installs it)")
    }

    /// Root: mounts, namespaces, another user, a user manager.
    public static let root = Prerequisite(missing: getuid() == 0 ? nil : "root")

    /// A PostgreSQL server to test against: the programs to start one, or STREAKD_TEST_PG_URL.
    public static let postgres = Prerequisite(
        missing: TestPostgres.isAvailable
            ? nil
            : "PostgreSQL 15 (\(PostgresCluster.binDirectory)/postgres, Debian package postgresql; "
                + "scripts/install-deps installs it) or a server named by STREAKD_TEST_PG_URL")

    /// PostgreSQL's programs, for a cluster of the test's own (to stop, pause or restart).
    public static let postgresPrograms = Prerequisite(
        missing: TestPostgres.canStartClusters
            ? nil
            : "PostgreSQL 15's programs in \(PostgresCluster.binDirectory) (Debian package postgresql; "
                + "scripts/install-deps installs it)")

    /// The test kit's own shared cluster (its socket folder), not a server STREAKD_TEST_PG_URL names.
    public static let ownPostgres = Prerequisite(
        missing: TestPostgres.externalURL == nil
            ? postgres.missing : "the test kit's own PostgreSQL cluster (STREAKD_TEST_PG_URL names another server)")

    /// The sqlite3 shell, to read a store apart from streakd.
    public static let sqlite3 = program("/usr/bin/sqlite3", package: "sqlite3")
    /// faketime, for hosts whose clocks are off.
    public static let faketime = program("/usr/bin/faketime", package: "faketime")
    /// unshare, for namespaces of a test's own.
    public static let unshare = program("/usr/bin/unshare", package: "util-linux")
    /// A systemd-journald that answers, or its program and root to start one standalone.
    public static let journald: Prerequisite = {
        if JournaldProcess.answers() { return Prerequisite(missing: nil) }
        let daemon = program(JournaldProcess.daemon, package: "systemd")
        if daemon.missing != nil || getuid() == 0 { return daemon }
        return Prerequisite(missing: "a running systemd-journald, or root to start one standalone")
    }()
    /// A private desktop: a session bus, Xvfb and dunst, and busctl to ask the bus.
    public static let desktop = all([
        program("/usr/bin/dbus-run-session", package: "dbus"), program("/usr/bin/Xvfb", package: "xvfb"),
        program("/usr/bin/dunst", package: "dunst"), program("/usr/bin/busctl", package: "systemd"),
    ])
}

/// A prerequisite missing where the tests are strict (CI): the test fails, naming it.
public struct MissingPrerequisite: Error, CustomStringConvertible {
    public let what: String
    public var description: String { "missing prerequisite (STREAKD_TEST_STRICT or CI is set): \(what)" }
}
