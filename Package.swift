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
            // No pkgConfig: hiredis.pc's cflags carry -D_FILE_OFFSET_BITS=64, which SwiftPM
            // drops with a warning on every build; the shim includes <hiredis/…> from
            // /usr/include and the module map links the library.
            providers: [.apt(["libhiredis-dev"])]
        ),
        // libnghttp2, for HTTPCore's HTTP/2: framing, HPACK, flow control (no sockets).
        .systemLibrary(
            name: "CNghttp2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        // ThreadSanitizer's annotations, weakly declared (header only): there only in a TSan build.
        .systemLibrary(name: "CThreadSanitizer"),
        // `Locked`: the package's one lock, a Mutex whose hand-offs ThreadSanitizer sees.
        .target(name: "Locking", dependencies: ["CThreadSanitizer"]),
        // Sockets, the epoll loop, HTTP/1.1 and HTTP/2. Knows nothing of topics.
        .target(name: "HTTPCore", dependencies: ["CStreamsSSL", "CNghttp2", "Locking"]),
        // Topics, subscribers, ids, replay windows. Knows nothing of sockets.
        .target(name: "StreamHub", dependencies: ["Locking"]),
        // JSON Web Tokens: strict parsing, signatures with libcrypto, claims and topic
        // grants, the refusals of the contract. Knows nothing of HTTP.
        .target(name: "JWT", dependencies: ["CStreamsSSL", "Locking"]),
        // A Redis client on HTTPCore's loop: pipelined commands and a pub/sub subscriber.
        // Knows nothing of topics.
        .target(name: "RedisClient", dependencies: ["CHiredis", "HTTPCore", "Locking"]),
        // The Redis engine: several gateways given one Redis are one gateway to clients.
        .target(name: "StreamCluster", dependencies: ["StreamHub", "RedisClient", "Locking"]),
        // The API's rules (API.md): topic and event names, Last-Event-ID, the route
        // table, the publish token and who may subscribe and publish with a token,
        // durations, the response policy. Imported by the
        // gateway, the load tool and the tests, so each rule has one definition.
        .target(name: "GatewayAPI", dependencies: ["HTTPCore", "StreamHub", "JWT"]),
        // The executable: handlers, SSE streams, publishing, static files, metrics, CLI.
        // The page in public/ is compiled in (EmbedPage plugin): served from any directory.
        .executableTarget(name: "SSEGateway", dependencies: ["GatewayAPI", "HTTPCore", "StreamHub", "StreamCluster", "RedisClient", "JWT"],
                          plugins: [.plugin(name: "EmbedPage")]),
        // Build-time tool of the EmbedPage plugin: public/'s files into one Swift source.
        .executableTarget(name: "EmbedPageTool"),
        .plugin(name: "EmbedPage", capability: .buildTool(), dependencies: ["EmbedPageTool"]),
        // In-process micro-benchmark of the hub's publish path (prints numbers).
        .executableTarget(name: "HubBenchmark", dependencies: ["StreamHub", "HTTPCore"]),
        // Signs tokens and times their verification (bench/jwt/publish_cost.py).
        .executableTarget(name: "JWTBenchmark", dependencies: ["JWT", "TestSupport"]),
        // The load tool: thousands of SSE subscribers and paced publishers in one process.
        .executableTarget(name: "SSELoad", dependencies: ["GatewayAPI", "HTTPCore", "StreamHub", "Locking"]),
        // For tests: the one SSE test client, the metrics reader, the gateway under
        // test (its client helpers; the real executable as a child process), throwaway
        // certificates (made with the openssl command at run time), the plain/TLS
        // `Transport` that parameterizes tests, children spawned safely, large
        // payloads built without holding a cooperative thread, and a real
        // redis-server per test.
        .target(name: "TestSupport", dependencies: ["HTTPCore", "StreamHub", "CStreamsSSL", "Locking"], path: "Tests/TestSupport"),
        .testTarget(name: "RedisClientTests", dependencies: ["RedisClient", "HTTPCore", "TestSupport", "Locking"]),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore", "TestSupport", "Locking"]),
        .testTarget(name: "GatewayAPITests", dependencies: ["GatewayAPI", "HTTPCore", "StreamHub"]),
        .testTarget(name: "StreamHubTests", dependencies: ["StreamHub", "HTTPCore", "Locking"]),
        .testTarget(name: "JWTTests", dependencies: ["JWT", "TestSupport", "CStreamsSSL"]),
        .testTarget(name: "StreamClusterTests", dependencies: ["StreamCluster", "StreamHub", "RedisClient", "HTTPCore", "TestSupport", "Locking"]),
        .testTarget(name: "SSEGatewayTests", dependencies: ["SSEGateway", "GatewayAPI", "HTTPCore", "StreamHub", "StreamCluster", "RedisClient", "TestSupport", "Locking"]),
        // SSEGateway: the executable the tests run as a child process.
        .testTarget(name: "SSELoadTests", dependencies: ["SSELoad", "GatewayAPI", "HTTPCore", "StreamHub", "SSEGateway", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
