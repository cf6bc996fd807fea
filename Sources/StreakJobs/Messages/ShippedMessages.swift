import StreakCore

/// The messages streakd ships: English and Simplified Chinese. A new kind is one entry in each
/// switch (the compiler asks for it); its placeholders are `MessageBook.placeholders`.
enum ShippedMessages {
    static let languages = ["en", "zh-Hans"]

    /// Each language's templates by key, read once (they are tested to read).
    static let book: [String: [String: MessageTemplate]] = {
        var book: [String: [String: MessageTemplate]] = [:]
        for language in languages {
            for kind in NotificationKind.allCases {
                for title in [false, true] {
                    let key = kind.rawValue + (title ? "_title" : "")
                    let text = source(kind, title: title, language: language)
                    // A shipped template that does not read is a bug the tests catch; the key's text stays empty.
                    book[language, default: [:]][key] = try? MessageBook.template(text, key: key)
                }
            }
        }
        return book
    }()

    static func source(_ kind: NotificationKind, title: Bool, language: String) -> String {
        switch language {
        case "zh-Hans": title ? chineseTitle(kind) : chinese(kind)
        default: title ? kind.englishTitle : english(kind)
        }
    }

    /// `daily` is the streak; any other is named.
    static let englishStreak = "{streak, select, daily {} other { {streak}}}"
    static let englishFreezes = "{freezes, plural, =0 {No freezes left.} one {# freeze left.} other {# freezes left.}}"

    static func english(_ kind: NotificationKind) -> String {
        switch kind {
        case .atRisk:
            "Your {length}-day\(englishStreak) streak is at risk! Check in today to keep it going."
                + "{goal, plural, =1 {} other { {done} of {goal} check-ins done.}} \(englishFreezes)"
        case .freezeUsed:
            "A freeze kept your {length}-day\(englishStreak) streak alive on {date}. \(englishFreezes)"
        case .streakBroken:
            "Your {length}-day\(englishStreak) streak ended on {date}. Check in today to start a new one."
        case .freezeRefilled:
            "You have a new freeze for your\(englishStreak) streak: \(englishFreezes)"
        case .badgeUnlocked: "You unlocked the “{badge}” badge!"
        case .levelUp: "You reached level {level}!"
        case .streakRepaired:
            "Your\(englishStreak) streak is mended: the break on {date} is repaired and your streak is back at {length} days."
        }
    }

    /// “workout” 上的…: a streak other than `daily` is named.
    static let chineseStreak = "{streak, select, daily {} other {在“{streak}”上}}"
    static let chineseFreezes = "{freezes, plural, =0 {冻结卡已用完。} other {还剩 # 张冻结卡。}}"

    static func chinese(_ kind: NotificationKind) -> String {
        switch kind {
        case .atRisk:
            "{streak, select, daily {你已连续打卡 {length} 天} other {你在“{streak}”上已连续打卡 {length} 天}}，"
                + "今天还没有打卡！记得今天打卡，别让连续记录中断。"
                + "{goal, plural, =1 {} other {今天已完成 {done}/{goal} 次。}}\(chineseFreezes)"
        case .freezeUsed:
            "{date} 没有打卡，一张冻结卡保住了你\(chineseStreak)连续 {length} 天的记录。\(chineseFreezes)"
        case .streakBroken:
            "你\(chineseStreak)连续 {length} 天的打卡记录在 {date} 中断了。今天打卡，重新开始吧！"
        case .freezeRefilled:
            "你\(chineseStreak)获得了一张新的冻结卡，现在共有 {freezes} 张。"
        case .badgeUnlocked: "你解锁了“{badge}”徽章！"
        case .levelUp: "你升到了 {level} 级！"
        case .streakRepaired: "你\(chineseStreak)在 {date} 中断的连续打卡已修复，现在连续 {length} 天。"
        }
    }

    static func chineseTitle(_ kind: NotificationKind) -> String {
        switch kind {
        case .atRisk: "连续打卡即将中断"
        case .freezeUsed: "已使用冻结卡"
        case .streakBroken: "连续打卡已中断"
        case .freezeRefilled: "冻结卡已补充"
        case .badgeUnlocked: "徽章已解锁"
        case .levelUp: "等级提升"
        case .streakRepaired: "连续打卡已修复"
        }
    }

    /// The shipped badges' titles and descriptions (`BadgeDefinition.defaults`, whose own are
    /// English) in the other languages streakd ships, by badge id.
    static let badgeTexts: [String: [String: (title: String, description: String)]] = [
        "zh-Hans": [
            "streak_3": ("热身", "连续打卡 3 天。"),
            "streak_7": ("坚持一周", "连续打卡 7 天。"),
            "streak_30": ("习惯养成", "连续打卡 30 天。"),
            "checkins_10": ("迈出第一步", "打卡 10 次。"),
            "checkins_50": ("常客", "打卡 50 次。"),
            "checkins_100": ("百次打卡", "打卡 100 次。"),
            "social_1": ("一起更好", "完成第一次社交打卡。"),
            "social_5": ("好伙伴", "完成 5 次社交打卡。"),
            "social_20": ("社交达人", "完成 20 次社交打卡。"),
            "knowledge_1": ("求知若渴", "完成第一次知识打卡。"),
            "knowledge_10": ("书虫", "完成 10 次知识打卡。"),
            "knowledge_50": ("学者", "完成 50 次知识打卡。"),
        ]
    ]
}
