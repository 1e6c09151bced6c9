// Proof that LeakSanitizer's reports of Swift weak-reference side tables are false
// positives (the entry in scripts/lsan-suppressions.txt):
//
//   swiftc -sanitize=address scripts/lsan-weak-probe.swift -o /tmp/lsan-weak-probe
//   /tmp/lsan-weak-probe    # "Direct leak of 32 byte(s) ... formWeakReference()"
//
// An object alive until exit whose weak reference is gone: nothing is leaked,
// yet LeakSanitizer reports the object's weak side table as a direct leak.
final class Target {}
final class Holder { weak var target: Target?; init(_ target: Target) { self.target = target } }
let target = Target()                 // reachable from a global until exit
do { _ = Holder(target) }             // forms the side table, then drops the weak reference
print("target alive:", target)
