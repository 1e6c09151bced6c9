import Foundation
import Glibc
import HTTPCore
import Testing
import TestSupport

/// The reliability tests: churn, stalled readers, publishing and shutdown under
/// load, each against the real `sse-gateway` executable. One suite, serialized
/// (each test loads the machine on its own); the nested suites live in the
/// other files of this directory.
///
/// Short by default (the whole suite takes about a minute on a loaded 2-core
/// machine). `STREAMS_SOAK_SECONDS=N` makes each churn (plain and TLS) run for
/// N seconds in cycles and switches the other tests to the sizes of issue 8
/// (100,000 stalled events, 10,000 subscribers under load); `bench/soak/run.sh`
/// sets it.
@Suite(.serialized)
struct Reliability {}

/// The soak switch and the figures the tests print for `bench/soak/`.
enum Soak {
    /// `STREAMS_SOAK_SECONDS` when set to a positive number: the long versions run.
    static let seconds: Double? = {
        guard let text = ProcessInfo.processInfo.environment["STREAMS_SOAK_SECONDS"],
              let value = Double(text), value > 0 else { return nil }
        return value
    }()

    static var isOn: Bool { seconds != nil }

    /// One line of figures on standard output, prefixed so `bench/soak/run.sh` can collect them.
    static func report(_ line: String) {
        print("reliability: \(line)")
        fflush(nil)  // every stream: stdout is a pipe under `swift test`
    }
}

/// What `/proc` says about a process: open descriptors and resident memory.
struct ProcessProbe: Sendable {
    let pid: Int32

    static let current = ProcessProbe(pid: getpid())

    /// Entries of `/proc/<pid>/fd` (this probe's own directory handle excluded).
    func openDescriptors() -> Int {
        guard let directory = opendir("/proc/\(pid)/fd") else { return -1 }
        defer { closedir(directory) }
        // Only the name is read, through a pointer: an entry is d_reclen bytes long,
        // often less than `dirent`, so copying `pointee` can read past the buffer.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        var count = 0
        while let entry = readdir(directory) {
            let name = UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: UInt8.self)
            let dot = UInt8(ascii: ".")
            let isDotOrDotDot = name[0] == dot && (name[1] == 0 || (name[1] == dot && name[2] == 0))
            if !isDotOrDotDot { count += 1 }
        }
        // The directory being read is itself open in this process while counting.
        return pid == getpid() ? count - 1 : count
    }

    /// What the open descriptors are, by kind (`socket`, `pipe`, `anon_inode:[timerfd]`, a
    /// path…), with how many of each: for failure messages, and for telling a socket left
    /// open from a descriptor the runtime opened meanwhile.
    func descriptorKinds() -> [String: Int] {
        guard let directory = opendir("/proc/\(pid)/fd") else { return [:] }
        defer { closedir(directory) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        var kinds: [String: Int] = [:]
        while let entry = readdir(directory) {
            let name = String(cString: UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: CChar.self))
            guard name != ".", name != ".." else { continue }
            var target = [CChar](repeating: 0, count: 256)
            let length = readlink("/proc/\(pid)/fd/\(name)", &target, target.count - 1)
            guard length > 0 else { continue }
            let link = String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // `socket:[123]`, `pipe:[456]`: the kind without the inode.
            let kind = link.hasPrefix("socket:") ? "socket" : link.hasPrefix("pipe:") ? "pipe" : link
            kinds[kind, default: 0] += 1
        }
        if pid == getpid() { kinds.removeValue(forKey: "/proc/\(pid)/fd") }
        return kinds
    }

    /// `VmRSS` of `/proc/<pid>/status`, in bytes (-1 if unreadable).
    func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return -1 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
            return (kilobytes ?? -1) * 1024
        }
        return -1
    }
}

/// A duration as seconds with one decimal, for messages and figures.
func secondsText(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return String(format: "%.1f s", Double(seconds) + Double(attoseconds) / 1e18)
}

/// Bytes as MiB with one decimal, for messages and figures.
func mebibytes(_ bytes: Int) -> String {
    String(format: "%.1f MiB", Double(bytes) / 1_048_576)
}

extension GatewayProcess {
    var probe: ProcessProbe { ProcessProbe(pid: child.pid) }

    /// Polls until `/proc/<pid>/fd` holds `count` descriptors or `seconds` pass; the last count seen.
    func waitForDescriptors(_ count: Int, upTo seconds: Double) async -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var last = probe.openDescriptors()
        while last != count && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
            last = probe.openDescriptors()
        }
        return last
    }

    /// The descriptor count once it held still for 300 ms (or when `seconds` pass): a gateway
    /// that has just started may still be opening its runtime's own (libdispatch opens its
    /// epoll, eventfd and timerfd at the first timer). A baseline read at once was one short
    /// on a loaded machine (CI, stop 40).
    func settledDescriptors(upTo seconds: Double = 3) async -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var last = probe.openDescriptors()
        var stillSince = ContinuousClock.now
        while ContinuousClock.now < deadline && ContinuousClock.now - stillSince < .milliseconds(300) {
            try? await Task.sleep(for: .milliseconds(50))
            let count = probe.openDescriptors()
            if count != last { (last, stillSince) = (count, .now) }
        }
        return last
    }

    /// Waits until exactly `count` sockets are open or `seconds` pass; the last count seen.
    func waitForSockets(_ count: Int, upTo seconds: Double) async -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var last = probe.descriptorKinds()["socket", default: 0]
        while last != count && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
            last = probe.descriptorKinds()["socket", default: 0]
        }
        return last
    }

    /// Waits until at most `count` descriptors are open (none leaked; one that was
    /// still closing when `count` was read, such as the start-up probe's connection on a
    /// loaded machine, may be gone by then); the last count seen.
    func waitForDescriptors(atMost count: Int, upTo seconds: Double) async -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var last = probe.openDescriptors()
        while last > count && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
            last = probe.openDescriptors()
        }
        return last
    }

    /// Waits until both subscriber gauges are 0 and only the metrics request's own
    /// connection is open; the last metrics seen.
    func waitUntilQuiet(upTo seconds: Double) async throws -> [String: Double] {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            let metrics = try await metrics()
            let quiet = metrics[subscribersMetric(.events)] == 0 && metrics[subscribersMetric(.state)] == 0
                && metrics["sse_gateway_connections"] == 1
            if quiet || ContinuousClock.now >= deadline { return metrics }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// The two channels, as the tests name them in paths and metrics.
enum StreamChannel: String, Sendable {
    case events
    case state
}

func subscribersMetric(_ channel: StreamChannel) -> String {
    "sse_gateway_subscribers{channel=\"\(channel.rawValue)\"}"
}

/// Samples a process's descriptors and resident memory every 100 ms in the
/// background and keeps the highest of each, until `stop()`.
final class PeakSampler: Sendable {
    private let task: Task<(descriptors: Int, resident: Int), Never>

    init(_ probe: ProcessProbe) {
        task = Task {
            var descriptors = 0, resident = 0
            while !Task.isCancelled {
                descriptors = max(descriptors, probe.openDescriptors())
                resident = max(resident, probe.residentBytes())
                try? await Task.sleep(for: .milliseconds(100))
            }
            return (descriptors, resident)
        }
    }

    /// Stops sampling; the peaks seen.
    func stop() async -> (descriptors: Int, resident: Int) {
        task.cancel()
        return await task.value
    }
}

/// The descriptor budget of issue 8: the test process and the gateway each stay
/// well under their limit of 20,000 open descriptors (the soak's 10,000
/// subscribers under load take the gateway to about 10,100).
let descriptorBudget = 15_000
