import Foundation
import StreakCore
import StreakDelivery
import StreakTestKit
import Testing

/// What the README's "Monitoring" ships: the alert rules (promtool), the weekly store check's
/// units, and the runs' summary entries explained by the catalog (journalctl -x).
@Suite("monitoring", .fastTier)
struct MonitoringTests {
    static let promtool = Prerequisite.program("/usr/bin/promtool", package: "prometheus")
    static let rules = packageRoot + "/deploy/streakd.rules.yml"

    /// `promtool check rules` takes the file, and the README shows it as it is.
    @Test(.requires(promtool)) func theAlertRulesAreValidAndInTheReadme() throws {
        let checked = run(["/usr/bin/promtool", "check", "rules", Self.rules])
        #expect(checked.code == 0 && checked.out.contains("SUCCESS: 4 rules found"), "\(checked)")
        let readme = try read(packageRoot + "/README.md")
        #expect(readme.contains("```yaml\n" + (try read(Self.rules)) + "```\n"), "README.md differs from the rules")
    }

    /// `promtool test rules`: the alert on the last successful tick fires for a host whose
    /// timestamp stopped, once it is over 45 minutes old for 5 minutes, and never for one whose
    /// ticks go on.
    @Test(.requires(promtool)) func theTickAlertFiresOnAStoppedTimestampOnly() throws {
        let scratch = try ScratchDir()
        let description =
            "Reminders are not being sent. See `systemctl status streakd-tick.timer` and `journalctl -u "
            + "streakd-tick.service`; `streakd status --check` lists the problems."
        let test = try scratch.write(
            "test.yml",
            """
            rule_files: [\(Self.rules)]
            evaluation_interval: 1m
            tests:
              - interval: 1m
                input_series:
                  - series: 'streakd_last_tick_success_timestamp_seconds{instance="stuck"}'
                    values: '0x90'
                  - series: 'streakd_last_tick_success_timestamp_seconds{instance="fine"}'
                    values: '0+60x90'
                alert_rule_test:
                  - eval_time: 49m
                    alertname: StreakdTickNotSucceeding
                    exp_alerts: []
                  - eval_time: 55m
                    alertname: StreakdTickNotSucceeding
                    exp_alerts:
                      - exp_labels: {severity: critical, instance: stuck}
                        exp_annotations:
                          summary: "streakd on stuck: no successful tick for 55m 0s"
                          description: "\(description)"

            """)
        let tested = run(["/usr/bin/promtool", "test", "rules", test])
        #expect(tested.code == 0 && tested.out.contains("SUCCESS"), "\(tested)")
    }

    /// The weekly check: `store check` from a Monday timer, Persistent=, the same in both kinds.
    @Test func theCheckTimerIsWeekly() throws {
        let analyze = try tool("systemd-analyze", package: "systemd")
        let timer = try read("\(packageRoot)/deploy/system/streakd-check.timer")
        #expect(timer == (try read("\(packageRoot)/deploy/user/streakd-check.timer")))
        #expect(values("Persistent", in: timer) == ["true"])
        let expression = try #require(values("OnCalendar", in: timer).first)
        let calendar = run(
            [analyze, "calendar", "--iterations=3", "--base-time=@1795000000", expression],
            env: ["PATH": searchPath, "TZ": "UTC", "LANG": "C.UTF-8"])
        try #require(calendar.code == 0, "systemd-analyze calendar: \(calendar)")
        let times = calendar.out.split(separator: "\n").filter { $0.contains("Next elapse:") || $0.contains("Iter. #") }
            .map { $0.split(separator: " ").suffix(4) }
        #expect(times.count == 3, "\(calendar.out)")
        #expect(
            times.allSatisfy { $0.first == "Mon" && $0.suffix(2).joined(separator: " ") == "03:37:00 UTC" },
            "\(calendar.out)")
        for kind in ["system", "user"] {
            let service = try read("\(packageRoot)/deploy/\(kind)/streakd-check.service")
            #expect(values("ExecStart", in: service) == ["@BINDIR@/streakd store check"], "\(kind)")
        }
    }

    /// The runs' summaries of a real `tick` and `refill`, read back from journald with the catalog
    /// staged by `make install-catalog`: each explained, every @FIELD@ filled in.
    @Test(.requires(.root, .unshare, .journald))
    func journalctlXExplainsTheRunSummaries() throws {
        try Journal.ensureRunning()
        let root = try ScratchDir()
        try #require(make(["install-catalog"], ["DESTDIR": root.path]).code == 0)
        let store = root.sub("s.sqlite")
        let env = [
            "PATH": searchPath, "LANG": "C.UTF-8", "HOME": root.path, "XDG_CONFIG_HOME": root.sub("config"),
            "STREAKD_NOW": "2026-11-21T19:00:00Z",
        ]
        for args in [["user", "add", "ana", "--tz", "Europe/Berlin"], ["tick"], ["refill"]] {
            let r = run([builtStreakd] + args + ["--store", store], env: env)
            try #require(r.code == 0, "\(args): \(r)")
        }
        let status = run([builtStreakd, "status", "-o", "json", "--store", store], env: env)
        let object = try JSONSerialization.jsonObject(with: Data(status.out.utf8)) as? [String: Any]
        let id = try #require(object?["store_id"] as? String)
        let ids = JournalSink.summaryMessageIDs
        _ = Journal.read(["-o", "cat", "STREAKD_STORE=\(id)"]) { $0.split(separator: "\n").count >= 2 }
        let shown = try #require(
            journalctlWithCatalog(
                root.path,
                [
                    "-x", "-o", "short", "STREAKD_STORE=\(id)", "MESSAGE_ID=\(ids["tick"]!)",
                    "MESSAGE_ID=\(ids["refill"]!)",
                ]))
        #expect(shown.code == 0, "\(shown)")
        for text in [
            "tick: 0 sent, 0 expired, 0 delivered, 0 failed, 0 dead, 0 pending, 0 held in ",
            "Subject: streakd tick: 0 sent, 0 delivered, 0 dead, 0 pending",
            "Subject: streakd refill: 0 refilled, 0 dead, 0 pending",
            "on the store \(id)",
        ] {
            #expect(shown.out.contains(text), "journalctl -x lacks \"\(text)\":\n\(shown.out)")
        }
        #expect(!shown.out.contains("@STREAKD_"), "an unfilled field in:\n\(shown.out)")
    }
}
