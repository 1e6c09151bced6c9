import CHiredis

/// A command argument whose bytes can be copied out without an intermediate array.
protocol CommandArgument {
    var byteCount: Int { get }
    func copyBytes(to destination: UnsafeMutableRawBufferPointer)
}

extension Array: CommandArgument where Element == UInt8 {
    var byteCount: Int { count }

    func copyBytes(to destination: UnsafeMutableRawBufferPointer) {
        withUnsafeBytes { destination.copyMemory(from: $0) }
    }
}

extension String: CommandArgument {
    var byteCount: Int { utf8.count }

    func copyBytes(to destination: UnsafeMutableRawBufferPointer) {
        var copy = self
        copy.withUTF8 { destination.copyMemory(from: UnsafeRawBufferPointer($0)) }
    }
}

/// RESP2 command encoding by hiredis's `redisFormatCommandArgv`.
///
/// Promises: the encoded bytes live only for the duration of `body` (hiredis's
/// buffer, freed right after); the arguments are gathered in one temporary
/// allocation (on the stack when small), nothing else is allocated in Swift.
enum CommandFormatter {
    /// Calls `body` with the command's RESP bytes; false when hiredis could not
    /// allocate them (`body` is not called then).
    static func format<A: CommandArgument>(_ arguments: [A], _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        precondition(!arguments.isEmpty, "a Redis command needs at least its name")
        var total = 0
        for argument in arguments { total += argument.byteCount }
        return withUnsafeTemporaryAllocation(byteCount: max(total, 1), alignment: 1) { storage in
            withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: arguments.count) { argv in
                withUnsafeTemporaryAllocation(of: Int.self, capacity: arguments.count) { lengths in
                    var offset = 0
                    for (index, argument) in arguments.enumerated() {
                        let count = argument.byteCount
                        argument.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: storage[offset..<offset + count]))
                        argv[index] = UnsafePointer(storage.baseAddress!.advanced(by: offset).assumingMemoryBound(to: CChar.self))
                        lengths[index] = count
                        offset += count
                    }
                    var target: UnsafeMutablePointer<CChar>?
                    let length = redisFormatCommandArgv(&target, Int32(arguments.count), argv.baseAddress, lengths.baseAddress)
                    guard length >= 0, let target else { return false }
                    defer { redisFreeCommand(target) }
                    body(UnsafeRawBufferPointer(start: target, count: Int(length)))
                    return true
                }
            }
        }
    }
}
