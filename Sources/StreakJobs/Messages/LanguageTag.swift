/// BCP 47 language tags (RFC 5646) as streakd takes them: well-formed, written in their
/// canonical case (`zh-hans-cn` is `zh-Hans-CN`), and matched to the languages streakd has
/// messages in by RFC 4647 lookup.
public enum LanguageTag {
    public static let rule =
        "use a BCP 47 language tag such as en, en-GB, zh-Hans or pt-BR (a 2- or 3-letter language, then optional "
        + "script, region and variants)"

    /// The tag in canonical case, or nil when it is not a well-formed tag of a language (a 2- or
    /// 3-letter language subtag: the 4- to 8-letter ones are reserved or unused).
    public static func canonical(_ text: String) -> String? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        guard text.utf8.count <= 64, let first = parts.first, (2...3).contains(first.count), first.allSatisfy(isLetter)
        else { return nil }
        var out = [first.lowercased()]
        var i = 1
        var stage = 0  // 0: extlang, 1: script, 2: region, 3: variants, 4: extensions
        while i < parts.count {
            let p = parts[i]
            guard !p.isEmpty, p.count <= 8, p.allSatisfy({ isLetter($0) || $0.isASCII && $0.isNumber }) else {
                return nil
            }
            if p.count == 1 {
                // An extension (a singleton and subtags of 2–8) or private use (x, then 1–8).
                let privateUse = p.lowercased() == "x"
                var rest: [String] = []
                i += 1
                while i < parts.count, parts[i].count > 1 || privateUse {
                    let q = parts[i]
                    guard (privateUse ? 1 : 2)...8 ~= q.count,
                        q.allSatisfy({ isLetter($0) || $0.isASCII && $0.isNumber })
                    else { return nil }
                    rest.append(q.lowercased())
                    i += 1
                }
                guard !rest.isEmpty else { return nil }
                out += [p.lowercased()] + rest
                stage = 4
                continue
            }
            if stage == 0 && p.count == 3 && p.allSatisfy(isLetter) && out.count < 4 {
                out.append(p.lowercased())  // extlang
            } else if stage <= 1 && p.count == 4 && p.allSatisfy(isLetter) {
                out.append(p.prefix(1).uppercased() + p.dropFirst().lowercased())
                stage = 2
            } else if stage <= 2 && (p.count == 2 && p.allSatisfy(isLetter) || p.count == 3 && p.allSatisfy(\.isNumber))
            {
                out.append(p.uppercased())
                stage = 3
            } else if stage <= 3 && (p.count >= 5 || p.count == 4 && p.first?.isNumber == true) {
                out.append(p.lowercased())
                stage = 3
            } else {
                return nil
            }
            i += 1
        }
        return out.joined(separator: "-")
    }

    /// The language of `available` that `tag` is served in by RFC 4647 lookup: the tag itself,
    /// then with subtags taken off its end (`zh-Hans-CN`, `zh-Hans`, `zh`), case-insensitively.
    /// Chinese without a script takes the script its region writes (Simplified but in Taiwan, Hong
    /// Kong and Macao). Nil when none matches.
    public static func lookup(_ tag: String, in available: [String]) -> String? {
        var candidates: [String] = []
        var parts = tag.split(separator: "-").map(String.init)
        if parts.first?.lowercased() == "zh", parts.count < 2 || parts[1].count != 4 {
            let region = parts.count > 1 ? parts[1].uppercased() : ""
            let script = ["TW", "HK", "MO"].contains(region) ? "Hant" : "Hans"
            candidates.append(tag)
            parts.insert(script, at: 1)
        }
        while !parts.isEmpty {
            candidates.append(parts.joined(separator: "-"))
            parts.removeLast()
            // A singleton left at the end names nothing by itself.
            if parts.last?.count == 1 { parts.removeLast() }
        }
        for candidate in candidates {
            if let found = available.first(where: { $0.lowercased() == candidate.lowercased() }) { return found }
        }
        return nil
    }

    private static func isLetter(_ c: Character) -> Bool { c.isASCII && c.isLetter }
}
