import GatewayAPI
import StreamHub

/// What the command line asks for: a run, or the help text.
enum LoadCommand: Sendable, Equatable {
    case run(LoadConfiguration)
    case help(String)
}

/// A command line `sse-load` refuses; `message` names the flag and the bad value.
/// The caller prints `diagnostic` to standard error and exits with status 2.
struct LoadUsageError: Error, Equatable, Sendable {
    let message: String

    var diagnostic: String { "sse-load: \(message)\nTry 'sse-load --help'." }
}

/// Reads the command line into a `LoadCommand`.
///
/// Promises: `--flag value` and `--flag=value` both work; the same flag twice
/// keeps the last value, except `--url`, where each one adds a URL (a node of a
/// cluster; the first replaces the default); `--help` answers at once; every error names the flag
/// at fault and quotes the bad value.
enum LoadCommandLine {
    static func parse(_ arguments: [String]) throws(LoadUsageError) -> LoadCommand {
        var configuration = LoadConfiguration()
        var urls: [LoadTarget] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { return .help(LoadOption.usage) }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw LoadUsageError(message: "unexpected argument '\(argument)' (sse-load takes only options)")
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let inline = name.count < body.count ? String(body.dropFirst(name.count + 1)) : nil
            guard let option = LoadOption.named(name) else {
                throw LoadUsageError(message: "unrecognized option '--\(name)'")
            }
            let value: String
            if let inline {
                value = inline
            } else if option.placeholder == nil {
                value = "true"
            } else {
                guard index < arguments.endIndex, !arguments[index].hasPrefix("--") else {
                    throw LoadUsageError(message: "option '--\(name)' needs a value")
                }
                value = arguments[index]
                index += 1
            }
            if option.name == "url" {
                urls.append(try LoadURL.parse(value, flag: "--url"))
                guard urls.count <= LoadConfiguration.maxTargets else {
                    throw LoadUsageError(message: "--url given more than \(LoadConfiguration.maxTargets) times")
                }
            } else {
                try apply(option, value, to: &configuration)
            }
        }
        if !urls.isEmpty { configuration.targets = urls }
        return .run(configuration)
    }

    private static func apply(_ option: LoadOption, _ value: String,
                              to configuration: inout LoadConfiguration) throws(LoadUsageError) {
        let flag = "--\(option.name)"
        switch option.name {
        case "publish-to":
            guard let choice = PublishTo(rawValue: value) else {
                throw LoadUsageError(message: "\(flag) must be 'first' or 'all', not '\(value)'")
            }
            configuration.publishTo = choice
        case "subscribers":
            configuration.subscribers = try integer(value, flag, 0...Int.max)
            guard configuration.subscribers <= LoadConfiguration.maxSubscribers else {
                throw LoadUsageError(message: "\(flag) \(value) is more than one process can hold: "
                    + "at most \(LoadConfiguration.maxSubscribers) (the process has 20,000 descriptors); "
                    + "run several sse-load processes for more")
            }
        case "topics": configuration.topics = try integer(value, flag, 1...LoadConfiguration.maxTopics)
        case "channel":
            guard let channel = Channel(rawValue: value) else {
                throw LoadUsageError(message: "\(flag) must be 'events' or 'state', not '\(value)'")
            }
            configuration.channel = channel
        case "publishers": configuration.publishers = try integer(value, flag, 0...LoadConfiguration.maxPublishers)
        case "rate":
            guard let rate = Double(value), rate.isFinite, rate >= 0, rate <= 10_000_000 else {
                throw LoadUsageError(message: "\(flag) must be a number of publishes per second (0 = as fast as possible), not '\(value)'")
            }
            configuration.rate = rate
        case "size": configuration.size = try integer(value, flag, 1...(1 << 24))
        case "publishes":
            let limit = try integer(value, flag, 0...Int.max)
            configuration.publishLimit = limit == 0 ? nil : limit
        case "duration": configuration.duration = try duration(value, flag, allowZero: false)
        case "ramp": configuration.ramp = try duration(value, flag, allowZero: true)
        case "connect-timeout": configuration.connectTimeout = try duration(value, flag, allowZero: false)
        case "settle": configuration.settle = try duration(value, flag, allowZero: true)
        case "topic-prefix":
            // Room for the largest `/<index>`: every name the run builds must be a topic name.
            guard TopicName.isValid(decoded: value + "/\(LoadConfiguration.maxTopics)") else {
                throw LoadUsageError(message: "\(flag) '\(value)' is not a topic name: use up to "
                    + "\(TopicName.maximumBytes - 1 - "\(LoadConfiguration.maxTopics)".count) bytes of "
                    + "A-Z a-z 0-9 . _ ~ - and single '/' between segments")
            }
            configuration.topicPrefix = value
        case "stall-after": configuration.stallAfter = try integer(value, flag, 0...Int.max)
        case "json":
            guard let on = ["true": true, "1": true, "yes": true, "false": false, "0": false, "no": false][value] else {
                throw LoadUsageError(message: "\(flag) takes no value (or true/false), not '\(value)'")
            }
            configuration.json = on
        default:
            preconditionFailure("option --\(option.name) is listed but not applied")
        }
    }

    private static func integer(_ text: String, _ flag: String, _ range: ClosedRange<Int>) throws(LoadUsageError) -> Int {
        guard let value = Int(text), range.contains(value) else {
            let bounds = range.upperBound == Int.max ? "at least \(range.lowerBound)"
                : "from \(range.lowerBound) to \(range.upperBound)"
            throw LoadUsageError(message: "\(flag) must be a whole number \(bounds), not '\(text)'")
        }
        return value
    }

    private static func duration(_ text: String, _ flag: String, allowZero: Bool) throws(LoadUsageError) -> Duration {
        guard let value = try? DurationText.parse(text, allowZero: allowZero) else {
            throw LoadUsageError(message: "\(flag) must be a duration like 500ms, 30s or 2m"
                + (allowZero ? "" : " (more than zero)") + ", not '\(text)'")
        }
        return value
    }
}
