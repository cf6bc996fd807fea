import Foundation
import StreakTestKit
import Testing

/// The tests' own files go away (TestFiles): each `swift test` used to leave its stores behind.
@Suite(.fastTier) struct TestFilesTests {
    @Test func pathsAreUnderThisProcesssFolder() throws {
        let one = TestFiles.path("store")
        #expect((one as NSString).deletingLastPathComponent.hasSuffix("/streakd-tests.\(getpid())"))
        #expect(one != TestFiles.path("store"))
        let made = try TestFiles.folder("made")
        var folder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: made, isDirectory: &folder) && folder.boolValue)
    }

    @Test func aFolderWhoseProcessIsGoneIsRemoved() throws {
        let parent = try ScratchDir()
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let names = ["streakd-tests.\(ended.processIdentifier)", "streakd-tests.\(getpid())", "streakd-tests.x"]
        for name in names {
            try FileManager.default.createDirectory(atPath: parent.sub(name + "/s"), withIntermediateDirectories: true)
        }
        #expect(TestFiles.removeLeftovers(in: parent.path) == [names[0]])
        let left = try FileManager.default.contentsOfDirectory(atPath: parent.path).sorted()
        #expect(left == names.dropFirst().sorted())
    }
}
