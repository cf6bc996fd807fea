import CProcess
import Foundation
import StreakCore
import StreakTestKit
import Synchronization
import Testing

@testable import StreakDelivery

#if canImport(Glibc)
    import Glibc
#endif

extension StreakCore.Notification {
    /// An at-risk notification as the sinks' tests send it.
    static let sample = Notification(
        kind: .atRisk, user: "u1", streak: "daily", localDate: LocalDate("2026-11-21")!,
        due: RFC3339.parse("2026-11-21T19:00:00Z")!, timezone: "Europe/Berlin", localDue: "2026-11-21T20:00:00+01:00",
        streakLength: 7, message: "Your 7-day streak is at risk! Check in today to keep it going.")
}

/// A throwaway directory of `#!/bin/sh` hooks, removed when the test ends.
final class HookDir {
    let url: URL
    var path: String { url.path }

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("streakd-hooks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes an executable script and returns its path.
    func script(_ name: String, _ body: String) throws -> String {
        let file = url.appendingPathComponent(name).path
        try writeFile(file, Array(("#!/bin/sh\n" + body + "\n").utf8), mode: 0o755)
        return file
    }

    func read(_ name: String) -> String? {
        try? String(contentsOfFile: url.appendingPathComponent(name).path, encoding: .utf8)
    }

    func exists(_ name: String) -> Bool {
        FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path)
    }

    func pid(_ name: String) -> pid_t? {
        read(name).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }
}

/// Whether a process still runs: absent or a zombie (dead, not yet reaped by whoever inherited it) is gone.
func isRunning(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return kill(pid, 0) == 0 }
    let state = stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first
    return state != "Z" && state != "X"
}

/// Waits up to `seconds` for a process to be gone.
func isGone(_ pid: pid_t, within seconds: Double = 2) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if !isRunning(pid) { return true }
        usleep(20_000)
    }
    return !isRunning(pid)
}

@Suite(.fastTier) struct HookSinkTests {
    let sample = StreakCore.Notification.sample

    func sink(_ argv: [String], timeout: Double = 5, kinds: Set<NotificationKind>? = nil) -> HookSink {
        HookSink(command: HookCommand(name: "test", argv: argv, timeout: timeout, kinds: kinds))
    }

    @Test func nameIsHookColonName() {
        #expect(sink(["/bin/true"]).name == "hook:test")
        #expect(HookCommand(name: "n", argv: ["x"]).timeout == 10)
        #expect(HookCommand(name: "n", argv: ["x"]).kinds == nil)
    }

    @Test func stdinCarriesTheJSONAndTheEnvironmentTheFields() throws {
        let dir = try HookDir()
        let hook = try dir.script(
            "save",
            """
            d=$(dirname "$0")
            cat > "$d/stdin"
            printf '%s\\n' "$STREAKD_KIND" "$STREAKD_USER" "$STREAKD_STREAK" "$STREAKD_LOCAL_DATE" \
                "$STREAKD_STREAK_LENGTH" "$STREAKD_DUE" "$STREAKD_TIMEZONE" "$STREAKD_KEY" "$STREAKD_MESSAGE" > "$d/vars"
            env | cut -d= -f1 | sort > "$d/names"
            """)
        #expect(sink([hook]).deliver(sample) == .delivered)
        #expect(dir.read("stdin") == sample.json.text + "\n")
        #expect(
            dir.read("vars")?.split(separator: "\n").map(String.init) == [
                "at_risk", "u1", "daily", "2026-11-21", "7", "2026-11-21T19:00:00Z", "Europe/Berlin",
                "at_risk/u1/daily/2026-11-21", sample.message,
            ])
        // Only PATH, HOME, LANG come from the parent; STREAKD_HOOK_RUN marks the run's processes; the
        // shell may add PWD and the like.
        let allowed = Set(
            sample.fields.map(\.0) + [
                "STREAKD_MESSAGE", "STREAKD_HOOK_RUN", "PATH", "HOME", "LANG", "PWD", "SHLVL", "_",
            ])
        let names = Set(dir.read("names")?.split(separator: "\n").map(String.init) ?? [])
        #expect(names.isSuperset(of: sample.fields.map(\.0) + ["STREAKD_MESSAGE"]))
        #expect(names.subtracting(allowed).isEmpty, "leaked: \(names.subtracting(allowed).sorted())")
    }

    /// The run's last word (its lease) is asked once everything is ready, right before the hook
    /// starts: a "no" there starts nothing and says so (nil), so the delivery stays pending.
    @Test func theLastWordComesRightBeforeTheHookStarts() throws {
        let dir = try HookDir()
        let hook = try dir.script("touch", #"touch "$(dirname "$0")/ran""#)
        let asked = Mutex(0)
        #expect(
            sink([hook]).deliver(
                sample,
                startingBefore: {
                    asked.withLock { $0 += 1 }
                    return nil
                }) == nil)
        #expect(asked.withLock { $0 } == 1)
        #expect(!dir.exists("ran"))
        #expect(sink([hook]).deliver(sample, startingBefore: { Int64.max }) == .delivered)
        #expect(dir.exists("ran"))
    }

    /// The child's own last look at the clock, right before `execve`: an instant already past
    /// there ends it unstarted (exit 127, nothing run); one still ahead lets the program run.
    @Test func theChildLooksAtTheClockLastAndStartsNothingLate() throws {
        let dir = try HookDir()
        let hook = try dir.script("touch", #"touch "$(dirname "$0")/ran""#)
        func spawn(_ path: String = hook, until: Int64) -> (failure: Int32, status: Int32) {
            let argv = [strdup(path), nil]
            let env: [UnsafeMutablePointer<CChar>?] = [nil]
            defer { free(argv[0]) }
            var failure: Int32 = 0
            let pid = streakd_spawn_before(path, argv, env, 0, 1, 2, until, &failure)
            var status: Int32 = 0
            if pid > 0 { while waitpid(pid, &status, 0) < 0 && errno == EINTR {} }
            return (failure, status)
        }
        let late = spawn(until: streakd_boot_nanoseconds() - 1)
        #expect(late.failure == -1 && late.status == 127 << 8, "\(late)")
        #expect(!dir.exists("ran"))
        let inTime = spawn(until: streakd_boot_nanoseconds() + 10_000_000_000)
        #expect(inTime.failure == 0 && inTime.status == 0, "\(inTime)")
        #expect(dir.exists("ran"))
        let missing = spawn(dir.path + "/nowhere", until: Int64.max)
        #expect(missing.failure == ENOENT && missing.status == 127 << 8, "\(missing)")
    }

    @Test func argumentsReachTheHookLiterallyWithoutAShell() throws {
        let dir = try HookDir()
        let hook = try dir.script("print-args", #"printf '%s\n' "$#" "$@" > "$(dirname "$0")/args""#)
        try "keep".write(toFile: dir.path + "/x", atomically: true, encoding: .utf8)
        #expect(sink([hook, "two words", "$(rm -rf x)", "; touch y"]).deliver(sample) == .delivered)
        #expect(dir.read("args") == "3\ntwo words\n$(rm -rf x)\n; touch y\n")
        #expect(dir.exists("x"))
        #expect(!dir.exists("y"))
    }

    @Test func nonZeroExitFailsWithTheLastLinesOfStderr() throws {
        let dir = try HookDir()
        let hook = try dir.script("fail", "echo 'webhook refused: 503' >&2\necho 'second line' >&2\nexit 3")
        #expect(sink([hook]).deliver(sample) == .failed("exit 3: webhook refused: 503 | second line"))

        // A chatty program says why last: the last three non-blank lines, from the tail of its output.
        let chatty = try dir.script(
            "chatty",
            "i=0; while [ $i -lt 2000 ]; do echo \"progress $i\" >&2; i=$((i+1)); done\n"
                + "echo 'HTTP/1.1 503 Service Unavailable' >&2\necho >&2\necho '  retry later  ' >&2\nexit 22")
        #expect(
            sink([chatty]).deliver(sample)
                == .failed("exit 22: progress 1999 | HTTP/1.1 503 Service Unavailable | retry later"))
        // A hook past its time-out says what it said too.
        let stuck = try dir.script("stuck", "echo 'connecting to chat.example' >&2\nexec sleep 30")
        #expect(sink([stuck], timeout: 1).deliver(sample) == .failed("timed out after 1s: connecting to chat.example"))

        let quiet = try dir.script("quiet", "exit 1")
        #expect(sink([quiet]).deliver(sample) == .failed("exit 1"))

        let long = try dir.script("long", "printf '%0300d\\n' 0 >&2\nexit 2")
        #expect(sink([long]).deliver(sample) == .failed("exit 2: " + String(repeating: "0", count: 200)))
    }

    @Test func aMissingExecutableCannotRun() throws {
        let dir = try HookDir()
        let outcome = sink([dir.path + "/no-such-hook"]).deliver(sample)
        #expect(outcome == .failed("cannot run \(dir.path)/no-such-hook: No such file or directory"))

        #expect(sink([]).deliver(sample) == .failed("cannot run hook test: empty argv"))

        let plain = dir.path + "/not-executable"
        try "#!/bin/sh\n".write(toFile: plain, atomically: true, encoding: .utf8)
        #expect(sink([plain]).deliver(sample) == .failed("cannot run \(plain): Permission denied"))
    }

    @Test func onlyAnAbsolutePathRuns() throws {
        // Issue 17: a relative path ran whatever was there in the folder of whoever ran `tick`, a bare
        // name whatever their PATH found. The configuration refuses both; the sink does too.
        // Refused before any look at the file system: no test changes the process's folder (tests
        // run in parallel), and none is needed.
        let dir = try HookDir()
        let rule = "not an absolute path; name the program by its full path"
        #expect(sink(["./hook.sh"]).deliver(sample) == .failed("cannot run ./hook.sh: \(rule)"))
        #expect(sink(["true"]).deliver(sample) == .failed("cannot run true: \(rule)"))
        #expect(sink([dir.path]).deliver(sample) == .failed("cannot run \(dir.path): Is a directory"))
        #expect(sink(["/bin/true"]).deliver(sample) == .delivered)
    }

    @Test func aHookPastItsTimeoutIsTerminated() throws {
        let dir = try HookDir()
        let hook = try dir.script("slow", "echo $$ > \"$(dirname \"$0\")/pid\"\nexec sleep 30")
        let start = Date()
        #expect(sink([hook], timeout: 1).deliver(sample) == .failed("timed out after 1s"))
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 1 && elapsed < 3)
        let pid = try #require(dir.pid("pid"))
        #expect(isGone(pid))
    }

    @Test func theTimeoutKillsTheHooksChildrenToo() throws {
        let dir = try HookDir()
        let hook = try dir.script(
            "parent",
            """
            d=$(dirname "$0")
            sleep 30 &
            echo $! > "$d/child"
            echo $$ > "$d/pid"
            wait
            """)
        let start = Date()
        #expect(sink([hook], timeout: 1).deliver(sample) == .failed("timed out after 1s"))
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 1 && elapsed < 1.8, "took \(elapsed)s")
        let child = try #require(dir.pid("child"))
        let pid = try #require(dir.pid("pid"))
        #expect(isGone(pid))
        #expect(isGone(child))
    }

    @Test func aHookIgnoringSIGTERMIsKilledASecondLater() throws {
        let dir = try HookDir()
        // The ignored disposition is inherited by sleep too: only SIGKILL ends either.
        let hook = try dir.script(
            "stubborn",
            """
            trap '' TERM
            d=$(dirname "$0")
            sleep 30 &
            echo $! > "$d/child"
            echo $$ > "$d/pid"
            wait
            """)
        let start = Date()
        #expect(sink([hook], timeout: 1).deliver(sample) == .failed("timed out after 1s"))
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= 2 && elapsed < 4)
        #expect(isGone(try #require(dir.pid("pid"))))
        #expect(isGone(try #require(dir.pid("child"))))
    }

    @Test func theHookStartsWithNoSignalBlocked() async throws {
        // Swift concurrency threads block most signals, and a child inherits the mask.
        let dir = try HookDir()
        // exec: the shell itself blocks every signal while it waits for a child.
        let hook = try dir.script("sigblk", #"exec grep '^SigBlk:' /proc/self/status > "$(dirname "$0")/mask""#)
        #expect(sink([hook]).deliver(sample) == .delivered)
        #expect(dir.read("mask") == "SigBlk:\t0000000000000000\n")
    }

    @Test func aChattyHookCannotBlock() throws {
        let dir = try HookDir()
        let hook = try dir.script("chatty", "head -c 2000000 /dev/zero\nhead -c 2000000 /dev/zero >&2\nexit 0")
        let start = Date()
        #expect(sink([hook]).deliver(sample) == .delivered)
        #expect(Date().timeIntervalSince(start) < 3)
    }

    @Test func aHookIgnoringStdinIsFine() throws {
        let dir = try HookDir()
        let hook = try dir.script("deaf", "exit 0")
        #expect(sink([hook]).deliver(sample) == .delivered)
    }

    @Test func aBackgroundChildHoldingStdoutDoesNotHoldTheRunAndIsEnded() throws {
        // Issue 17: a `&` child was left running after "delivered" (SPEC §5: nothing a hook starts
        // outlives it).
        let dir = try HookDir()
        let hook = try dir.script("detach", "sleep 30 &\necho $! > \"$(dirname \"$0\")/child\"\nexit 0")
        let start = Date()
        #expect(sink([hook]).deliver(sample) == .delivered)
        #expect(Date().timeIntervalSince(start) < 2)
        let child = try #require(dir.pid("child"))
        #expect(!isRunning(child), "the hook's background child outlived it")
        kill(child, SIGKILL)
    }

    @Test func aDaemonThatLeftTheGroupWithSetsidIsEndedToo() throws {
        // Issue 17: a double fork and setsid leave the hook's process group and session; streakd,
        // their subreaper, finds them by STREAKD_HOOK_RUN in their environment.
        let dir = try HookDir()
        let hook = try dir.script(
            "daemon",
            """
            d=$(dirname "$0")
            setsid sh -c 'echo $$ > "$1/daemon"; sleep 30 & echo $! > "$1/grandchild"; exec sleep 31' sh "$d" \
                </dev/null >/dev/null 2>&1 &
            while [ ! -s "$d/grandchild" ]; do sleep 0.01; done
            exit 0
            """)
        #expect(sink([hook]).deliver(sample) == .delivered)
        let daemon = try #require(dir.pid("daemon"))
        let grandchild = try #require(dir.pid("grandchild"))
        #expect(!isRunning(daemon), "the setsid daemon outlived its hook")
        #expect(!isRunning(grandchild), "the daemon's child outlived the hook")
        kill(daemon, SIGKILL)
        kill(grandchild, SIGKILL)
    }

    @Test func aStopGivesAHookInFlightAGraceThenEndsIt() throws {
        // Issue 17: SIGTERM to `tick` (systemd stopping the unit). A hook that finishes within the
        // grace is delivered; one that does not is ended with its group and is `interrupted`.
        let dir = try HookDir()
        let stop = Flag()
        let quick = try dir.script("quick", "sleep 0.5\ntouch \"$(dirname \"$0\")/done\"")
        let stopping = HookSink(command: HookCommand(name: "q", argv: [quick], timeout: 30), stopRequested: stop.get)
        stop.set()
        #expect(stopping.deliver(sample) == .delivered)
        #expect(dir.exists("done"))

        let slow = try dir.script("slow", "echo $$ > \"$(dirname \"$0\")/pid\"\nsleep 30")
        let start = Date()
        let outcome = HookSink(command: HookCommand(name: "s", argv: [slow], timeout: 30), stopRequested: stop.get)
            .deliver(sample)
        guard case .interrupted = outcome else {
            Issue.record("expected interrupted, got \(outcome)")
            return
        }
        let elapsed = Date().timeIntervalSince(start)
        #expect(elapsed >= HookSink.stopGrace && elapsed < HookSink.stopGrace + 2, "took \(elapsed)s")
        #expect(isGone(try #require(dir.pid("pid"))))
    }

    @Test func otherKindsAreDeliveredWithoutRunning() throws {
        let dir = try HookDir()
        let hook = try dir.script("touch", "touch \"$(dirname \"$0\")/ran\"")
        let only = sink([hook], kinds: [.streakBroken, .freezeUsed])
        #expect(only.deliver(sample) == .delivered)
        #expect(!dir.exists("ran"))
        var broken = sample
        broken.kind = .streakBroken
        #expect(only.deliver(broken) == .delivered)
        #expect(dir.exists("ran"))
    }

    @Test func secondsAreWrittenWithoutANeedlessFraction() {
        #expect(HookSink.seconds(10) == "10")
        #expect(HookSink.seconds(1.5) == "1.5")
    }
}

/// A stop flag a test sets.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .relaxed) }
    var get: @Sendable () -> Bool { { [self] in value.load(ordering: .relaxed) } }
}

extension DeliveryOutcome {
    var failure: String? {
        if case .failed(let text) = self { return text }
        return nil
    }
}

@Suite(.fastTier) struct RetryPolicyTests {
    let policy = RetryPolicy()
    let t0 = RFC3339.parse("2026-11-21T19:00:00Z")!

    @Test func backsOffOneFiveThirtyMinutesThenTwoHours() {
        #expect(policy.next(attempts: 1, lastAttempt: t0) == .due(t0 + 60))
        #expect(policy.next(attempts: 2, lastAttempt: t0) == .due(t0 + 300))
        #expect(policy.next(attempts: 3, lastAttempt: t0) == .due(t0 + 1800))
        #expect(policy.next(attempts: 4, lastAttempt: t0) == .due(t0 + 7200))
    }

    @Test func deadAfterFiveAttemptsByDefault() {
        #expect(policy.maxAttempts == 5)
        #expect(!policy.isDead(attempts: 4))
        #expect(policy.isDead(attempts: 5))
        #expect(policy.next(attempts: 5, lastAttempt: t0) == .dead)
        #expect(policy.next(attempts: 9, lastAttempt: t0) == .dead)
    }

    @Test func theLastStepRepeatsForLongerPolicies() {
        let patient = RetryPolicy(maxAttempts: 8)
        #expect(patient.next(attempts: 6, lastAttempt: t0) == .due(t0 + 7200))
        #expect(patient.delay(afterAttempts: 7) == 7200)
        #expect(patient.next(attempts: 8, lastAttempt: t0) == .dead)
    }

    @Test func noAttemptYetIsDueAtOnce() {
        #expect(policy.next(attempts: 0, lastAttempt: t0) == .due(t0))
        #expect(policy.isDue(attempts: 0, lastAttempt: t0, now: t0))
    }

    @Test func isDueComparesWithNow() {
        #expect(!policy.isDue(attempts: 2, lastAttempt: t0, now: t0 + 299))
        #expect(policy.isDue(attempts: 2, lastAttempt: t0, now: t0 + 300))
        #expect(!policy.isDue(attempts: 5, lastAttempt: t0, now: t0 + 365 * Instant.day))
    }

    @Test func customSteps() {
        let fast = RetryPolicy(backoff: [1, 2], maxAttempts: 3)
        #expect(fast.next(attempts: 1, lastAttempt: t0) == .due(t0 + 1))
        #expect(fast.next(attempts: 2, lastAttempt: t0) == .due(t0 + 2))
        #expect(fast.next(attempts: 3, lastAttempt: t0) == .dead)
    }
}
