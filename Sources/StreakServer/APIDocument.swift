import COpenAPI

/// The OpenAPI 3.1 document of the API (docs/openapi.json, built into the binary), served at
/// `GET /openapi.json`.
enum APIDocument {
    static let text = String(cString: streakd_openapi())
}
