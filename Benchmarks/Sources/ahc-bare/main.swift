import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// Benchmarks/deliveries' reference for the webhook's client: AsyncHTTPClient alone, with
/// nothing of streakd around it, POSTing one request of streakd's (a sample the receiver kept:
/// id, timestamp, signature and body, a line each) N times, at most CONCURRENCY at once, each
/// started as an answer comes back (on the client's event loop, no other thread). Prints the
/// rate; the receiver measures it too.
///   ahc-bare URL N CONCURRENCY SAMPLE
let arguments = CommandLine.arguments
guard arguments.count == 5, let count = Int(arguments[2]), let concurrency = Int(arguments[3]),
    let sample = try? String(contentsOfFile: arguments[4], encoding: .utf8).split(separator: "\n").map(String.init),
    sample.count >= 4
else {
    FileHandle.standardError.write(Data("usage: ahc-bare URL N CONCURRENCY SAMPLE\n".utf8))
    exit(64)
}
var configuration = HTTPClient.Configuration(
    redirectConfiguration: .disallow,
    connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: concurrency))
configuration.httpVersion = .http1Only
let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
var template = try HTTPClient.Request(url: arguments[1], method: .POST)
template.headers.add(name: "User-Agent", value: "ahc-bare")
template.headers.add(name: "Content-Type", value: "application/json")
template.headers.add(name: "webhook-id", value: sample[0])
template.headers.add(name: "webhook-timestamp", value: sample[1])
template.headers.add(name: "webhook-signature", value: sample[2])
template.body = .bytes(Array(sample[3].utf8))
let request = template

let started = Atomic<Int>(0)
let answered = Atomic<Int>(0)
let failed = Atomic<Int>(0)
let done = DispatchSemaphore(value: 0)

@Sendable func next() {
    guard started.add(1, ordering: .relaxed).oldValue < count else { return }
    let delegate = ResponseAccumulator(request: request, maxBodySize: 16 * 1024)
    client.execute(request: request, delegate: delegate).futureResult.whenComplete { result in
        if case .failure = result { failed.add(1, ordering: .relaxed) }
        if answered.add(1, ordering: .relaxed).newValue == count { done.signal() }
        next()
    }
}

let start = ContinuousClock.now
for _ in 0..<concurrency { next() }
done.wait()
let seconds = Double((ContinuousClock.now - start) / .milliseconds(1)) / 1000
print("\(count) requests in \(seconds) s: \(Int(Double(count) / seconds))/s, \(failed.load(ordering: .relaxed)) failed")
try? client.syncShutdown()
