import Foundation

/// Throwaway token keys for tests, made with the `openssl` command in the
/// process's scratch directory the first time they are asked for and removed
/// when the process exits; never committed.
///
/// The RSA and P-256 pairs sign and verify good tokens; the others exist to
/// be refused as verification keys (too short, wrong curve, wrong type).
public struct TestTokenKeys: Sendable {
    public let directory: String
    /// RSA 2048: private key PEM text, public key PEM text and its file.
    public let rsaPrivate: String
    public let rsaPublic: String
    public let rsaPublicFile: String
    /// EC P-256: private key PEM text, public key PEM text and its file.
    public let ecPrivate: String
    public let ecPublic: String
    public let ecPublicFile: String
    /// A second P-256 pair, for "signed by another key".
    public let otherECPrivate: String
    /// Public keys refused as verification keys: RSA 1024, EC P-384, Ed25519.
    public let rsa1024PublicFile: String
    public let p384PublicFile: String
    public let ed25519PublicFile: String
    /// The RSA private key's file (a PEM that is not a public key).
    public let rsaPrivateFile: String

    /// The process's keys (generated on first use).
    public static let shared: TestTokenKeys = {
        do {
            return try TestTokenKeys(directory: Scratch.directory + "/token-keys")
        } catch {
            fatalError("cannot generate token keys with the openssl command: \(error)")
        }
    }()

    private init(directory: String) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        func pair(_ name: String, _ options: [String]) throws -> (privateFile: String, publicFile: String) {
            let privateFile = directory + "/\(name).key", publicFile = directory + "/\(name).pub"
            try Self.openssl(["genpkey"] + options + ["-out", privateFile])
            try Self.openssl(["pkey", "-in", privateFile, "-pubout", "-out", publicFile])
            return (privateFile, publicFile)
        }
        func text(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }
        let rsa = try pair("rsa", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        let ec = try pair("ec", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        let otherEC = try pair("ec-other", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        rsaPrivateFile = rsa.privateFile
        rsaPrivate = try text(rsa.privateFile)
        rsaPublicFile = rsa.publicFile
        rsaPublic = try text(rsa.publicFile)
        ecPrivate = try text(ec.privateFile)
        ecPublicFile = ec.publicFile
        ecPublic = try text(ec.publicFile)
        otherECPrivate = try text(otherEC.privateFile)
        rsa1024PublicFile = try pair("rsa1024", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"]).publicFile
        p384PublicFile = try pair("p384", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"]).publicFile
        ed25519PublicFile = try pair("ed25519", ["-algorithm", "ED25519"]).publicFile
    }

    private static func openssl(_ arguments: [String]) throws {
        let run = try Spawn.run("openssl", arguments)
        guard run.status == 0 else { throw Failed(command: "openssl " + arguments.joined(separator: " "), output: run.stderr) }
    }

    struct Failed: Error, CustomStringConvertible {
        let command: String
        let output: String
        var description: String { "\(command) failed: \(output)" }
    }
}
