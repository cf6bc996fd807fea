import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import StreakJobs
import Synchronization

extension APIServer {
    /// `GET /v1/preview`: its parameters checked first (a problem answers a bad one), then
    /// `preview -o json`'s lines streamed as they are made (`application/x-ndjson`). The preview
    /// runs on a thread of its own, at most a few pieces ahead of the client: a slow reader holds
    /// it back, and one that leaves lets it run to its end without keeping what it makes.
    func preview(_ request: Request, until: String?, user: String?, kind: String?) async throws -> Response {
        let started = ContinuousClock.now
        let authorization = request.headers[.authorization]
        let trusted = Self.trustedConnection
        let gate = try await pool.runIfActive { () -> Result<(Context, String?), APIAnswer> in
            authorized(authorization, needs: .read, trusted: trusted).flatMap { c, client in
                (c.apiPreviewProblem(until: until, user: user, kind: kind) ?? c.tokenRefusal()).map { .failure($0) }
                    ?? .success((c, client))
            }
        }
        let context: Context
        switch gate {
        case .failure(let refused):
            log(request, status: refused.status, since: started, client: nil)
            return Self.response(refused)
        case .success(let (c, client)):
            log(request, status: 200, since: started, client: client)
            context = c
        }
        let (pieces, continuation) = AsyncStream<ByteBuffer>.makeStream()
        let room = DispatchSemaphore(value: 4)
        let gone = Atomic<Bool>(false)
        let logger = self.logger
        Thread.detachNewThread {
            do {
                try context.apiPreview(until: until, user: user, kind: kind) { bytes in
                    guard !gone.load(ordering: .acquiring) else { return }
                    room.wait()
                    continuation.yield(ByteBuffer(bytes: bytes))
                }
            } catch {
                // The status is sent: the stream ends early, and the log says why.
                logger.error("preview ended early", metadata: ["error": "\(error)"])
            }
            continuation.finish()
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/x-ndjson"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                do {
                    for await piece in pieces {
                        try await writer.write(piece)
                        room.signal()
                    }
                    try await writer.finish(nil)
                } catch {
                    gone.store(true, ordering: .releasing)
                    room.signal()
                    throw error
                }
            })
    }
}
