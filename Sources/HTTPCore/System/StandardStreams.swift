import Glibc

/// Standard output and error, written unbuffered (C's `stdout` and `stderr` globals
/// are shared mutable state to Swift 6).
public enum StandardStreams {
    /// Writes all of `text` to standard output.
    public static func writeOutput(_ text: String) { Syscall.writeAll(STDOUT_FILENO, Array(text.utf8)) }

    /// Writes all of `text` to standard error.
    public static func writeError(_ text: String) { Syscall.writeAll(STDERR_FILENO, Array(text.utf8)) }

    /// Whether standard output is a terminal.
    public static var outputIsTerminal: Bool { Syscall.isTerminal(STDOUT_FILENO) }
}
