import Foundation
import StreakTestKit
import Testing

@testable import StreakDelivery

/// A zh-Hans user's reminder, from the built streakd's `tick` to where it is read: the journal
/// (its MESSAGE, and `log`), a real desktop (dunst on a private session bus, its summary, body
/// and icon) and a hook (its JSON and STREAKD_MESSAGE), all in Simplified Chinese.
@Suite(.fastTier) struct LanguageEndToEndTests {
    static let text = "你已连续打卡 7 天，今天还没有打卡！记得今天打卡，别让连续记录中断。还剩 1 张冻结卡。"

    @Test func aChineseUsersReminderEverywhere() throws {
        try Journal.ensureRunning()
        let session = try DesktopSession(server: true)
        let dir = try HookDir()
        let user = "zh-\(UUID().uuidString.lowercased().prefix(8))"
        let hook = try dir.script(
            "save", #"d=$(dirname "$0"); cat > "$d/stdin"; printf '%s' "$STREAKD_MESSAGE" > "$d/message""#)
        let config = dir.path + "/streakd.toml"
        try """
        [desktop]
        users = ["\(user)"]

        [[hooks]]
        name = "save"
        command = ["\(hook)"]

        """.write(toFile: config, atomically: true, encoding: .utf8)
        let env = [
            "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": dir.path, "STREAKD_STORE": dir.path + "/s.sqlite",
            "DBUS_SESSION_BUS_ADDRESS": session.address, "STREAKD_NOW": "2026-11-21T11:00:00Z",
        ]
        func streakd(_ args: [String], now: String? = nil, stdin: String? = nil) -> Outcome {
            var e = env
            if let now { e["STREAKD_NOW"] = now }
            return run([builtStreakd] + args + ["--config", config], env: e, stdin: stdin, timeout: .seconds(60))
        }
        #expect(streakd(["user", "add", user, "--tz", "Asia/Shanghai", "--lang", "zh-Hans"]).code == 0)
        let lines = (14...20).map { #"{"user":"\#(user)","at":"2026-11-\#($0)T08:00:00+08:00"}"# }
        #expect(streakd(["import", "-"], stdin: lines.joined(separator: "\n") + "\n").code == 0)
        let tick = streakd(["tick"], now: "2026-11-21T12:00:00Z")  // 20:00 in Shanghai
        #expect(tick.code == 0, "\(tick)")
        // The badges the imported week unlocked are a day old: recorded, not sent.
        #expect(
            tick.out == "sent 2026-11-21T12:00:00Z at_risk \(user)/daily 2026-11-21: \(Self.text)\n"
                + "expired 2026-11-16T00:00:00Z badge_unlocked \(user) badge streak_3 2026-11-16: 你解锁了“热身”徽章！\n"
                + "expired 2026-11-20T00:00:00Z badge_unlocked \(user) badge streak_7 2026-11-20: 你解锁了“坚持一周”徽章！\n",
            "\(tick)")

        // The journal keeps the message as the user was told it, and the store's identity.
        let entries = try Journal.entries(["STREAKD_USER=\(user)"], count: 1)
        #expect(entries.first?["MESSAGE"] as? String == Self.text)
        let store = try #require(entries.first?["STREAKD_STORE"] as? String)
        #expect(store.count == 32)
        let log = streakd(["log", "--user", user, "-o", "cat"])
        #expect(log.out == Self.text + "\n", "\(log)")

        // The desktop: the heading and the text in Chinese, the app's name and icon.
        let shown = try #require(session.printed().first)
        #expect(shown["appname"] == "streakd")
        #expect(shown["summary"] == "连续打卡即将中断")
        #expect(shown["body"] == Self.text)
        #expect(shown["icon"] == "streakd", "\(shown)")
        try session.run("/usr/bin/dunstctl", ["close-all"])  // closed, it goes to dunst's history
        let history = try session.history()
        #expect(history.first?["summary"] == "连续打卡即将中断" && history.first?["body"] == Self.text)

        // The hook: the JSON object and the environment.
        let json = try #require(dir.read("stdin"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["message"] as? String == Self.text)
        #expect(dir.read("message") == Self.text)

        // A badge earned live: the desktop celebrates it in Chinese, the hook gets it too.
        #expect(streakd(["checkin", user, "--meta", "kind=social"], now: "2026-11-21T12:05:00Z").code == 0)
        let badge = streakd(["tick"], now: "2026-11-21T12:15:00Z")
        #expect(badge.code == 0, "\(badge)")
        let text = "你解锁了“一起更好”徽章！"
        var shownBadge: [String: String]?
        for _ in 0..<50 where shownBadge == nil {
            shownBadge = session.printed().first { $0["body"] == text }
            if shownBadge == nil { usleep(100_000) }
        }
        let celebrated = try #require(shownBadge, "\(session.printed())")
        #expect(celebrated["summary"] == "徽章已解锁" && celebrated["appname"] == "streakd")
        #expect(dir.read("message") == text)
    }
}
