import StreakCore
import TOMLKit

/// `[messages]` of `streakd.toml` (SPEC §10): `default_language`, and a table of templates per
/// language, `[messages.LANG]`, keyed by kind (`at_risk`) and heading (`at_risk_title`).
extension ConfigLoader {
    static func readMessages(_ table: TOMLTable, reader: TableReader, into config: inout Config) throws {
        guard let t = try reader.table(table, "messages", in: "") else { return }
        var book = MessageBook()
        for key in t.keys.sorted() where key != "default_language" {
            reader.attempt {
                guard let language = LanguageTag.canonical(key) else {
                    throw reader.error(
                        "messages", key, "\(quoted(key)) is not a language; \(LanguageTag.rule)",
                        header: "messages.\(key)")
                }
                guard book.configured[language] == nil else {
                    throw reader.error(
                        "messages", key, "a second table for \(language); keep one [messages.\(language)]",
                        header: "messages.\(key)")
                }
                guard let templates = try reader.table(t, key, in: "messages") else { return }
                let section = "messages.\(key)"
                try reader.keys(templates, in: section, allowed: MessageBook.keys)
                var read: [String: MessageTemplate] = [:]
                for name in templates.keys.sorted() where MessageBook.keys.contains(name) {
                    guard let text = try reader.string(templates, name, in: section) else { continue }
                    // A hook gets the message in its environment, where the kernel takes at most 128 KiB
                    // a value (E2BIG): a 200 KB template passed, then every hook run failed (issue 31).
                    guard text.utf8.count <= MessageBook.templateBytesAtMost else {
                        reader.note(
                            reader.error(
                                section, name,
                                "is \(text.utf8.count) bytes; a template may be at most "
                                    + "\(MessageBook.templateBytesAtMost) bytes (hooks get the message in their environment)"
                            ))
                        continue
                    }
                    do {
                        read[name] = try MessageBook.template(text, key: name)
                    } catch let problem as MessageTemplate.Problem {
                        reader.note(reader.error(section, name, problem.message))
                    }
                }
                book.configured[language] = read
            }
        }
        if let text = try reader.string(t, "default_language", in: "messages") {
            guard let tag = LanguageTag.canonical(text) else {
                throw reader.error(
                    "messages", "default_language", "\(quoted(text)) is not a language; \(LanguageTag.rule)")
            }
            guard let language = LanguageTag.lookup(tag, in: book.languages) else {
                throw reader.error(
                    "messages", "default_language",
                    "streakd has no messages in \(tag); use one of \(book.languages.joined(separator: ", ")), "
                        + "or add a [messages.\(tag)] table")
            }
            book.defaultLanguage = language
        }
        config.messages = book
    }
}

extension MessageBook {
    /// The `[messages]` part of the effective configuration: the default language, the languages
    /// there are messages in, and the configured templates (the shipped ones are built in).
    var tomlLines: [String] {
        var lines = [
            "", "[messages]", "default_language = \(JSON.string(defaultLanguage).text)",
            "# languages: \(languages.joined(separator: ", ")) (en and zh-Hans are built in)",
        ]
        for language in configured.keys.sorted() {
            lines += ["", "[messages.\(language)]"]
            for (key, template) in configured[language]!.sorted(by: { $0.key < $1.key }) {
                lines.append("\(key) = \(JSON.string(template.source).text)")
            }
        }
        return lines
    }

    var json: JSON {
        .object([
            ("default_language", .string(defaultLanguage)), ("languages", .array(languages.map { .string($0) })),
            (
                "templates",
                .object(
                    configured.keys.sorted().map { language in
                        (
                            language,
                            .object(
                                configured[language]!.sorted { $0.key < $1.key }.map {
                                    ($0.key, .string($0.value.source))
                                })
                        )
                    })
            ),
        ])
    }
}
