// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "streams",
    products: [
        .executable(name: "sse-gateway", targets: ["SSEGateway"]),
        .executable(name: "sse-load", targets: ["SSELoad"]),
    ],
    targets: [
        // C shim: epoll, eventfd and OpenSSL headers Glibc does not export.
        .systemLibrary(
            name: "CStreamsSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // hiredis, for RedisClient: RESP parsing and command formatting only (no sockets).
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        // `Locked`: the package's one lock, a Mutex whose hand-offs ThreadSanitizer sees.
        .target(name: "Locking"),
        // Sockets, the epoll loop, HTTP/1.1. Knows nothing of topics.
        .target(name: "HTTPCore", dependencies: ["CStreamsSSL", "Locking"]),
        // Topics, subscribers, ids, replay windows. Knows nothing of sockets.
        .target(name: "StreamHub", dependencies: ["Locking"]),
        // JSON Web Tokens: strict parsing, signatures with libcrypto, claims and topic
        // grants, the refusals of the contract. Knows nothing of HTTP.
        .target(name: "JWT", dependencies: ["CStreamsSSL", "Locking"]),
        // A Redis client on HTTPCore's loop: pipelined commands and a pub/sub subscriber.
        // Knows nothing of topics.
        .target(name: "RedisClient", dependencies: ["CHiredis", "HTTPCore", "Locking"]),
        // The executable: routes, SSE, publishing, static files, metrics, CLI.
        .executableTarget(name: "SSEGateway", dependencies: ["HTTPCore", "StreamHub"]),
        // In-process micro-benchmark of the hub's publish path (prints numbers).
        .executableTarget(name: "HubBenchmark", dependencies: ["StreamHub", "HTTPCore"]),
        // Signs tokens and times their verification (bench/jwt/publish_cost.py).
        .executableTarget(name: "JWTBenchmark", dependencies: ["JWT", "TestSupport"]),
        // The load tool: thousands of SSE subscribers and paced publishers in one process.
        .executableTarget(name: "SSELoad", dependencies: ["HTTPCore", "StreamHub", "Locking"]),
        // For tests: throwaway certificates (made with the openssl command at run
        // time), the plain/TLS `Transport` that parameterizes tests, children
        // spawned safely, large payloads built without holding a cooperative thread,
        // and a real redis-server per test.
        .target(name: "TestSupport", dependencies: ["HTTPCore", "CStreamsSSL", "Locking"], path: "Tests/TestSupport"),
        .testTarget(name: "RedisClientTests", dependencies: ["RedisClient", "HTTPCore", "TestSupport", "Locking"]),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore", "TestSupport", "Locking"]),
        .testTarget(name: "StreamHubTests", dependencies: ["StreamHub", "Locking"]),
        .testTarget(name: "JWTTests", dependencies: ["JWT", "TestSupport", "CStreamsSSL"]),
        .testTarget(name: "SSEGatewayTests", dependencies: ["SSEGateway", "HTTPCore", "StreamHub", "TestSupport", "Locking"]),
        .testTarget(name: "SSELoadTests", dependencies: ["SSELoad", "HTTPCore", "StreamHub", "SSEGateway"]),
    ],
    swiftLanguageModes: [.v6]
)
