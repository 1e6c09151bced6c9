/// The command line and the environment, read into a `CommandLineOutcome`.
///
/// Promises: a flag wins over its environment variable, which wins over the
/// default; the same flag given twice keeps the last value; `--help` and
/// `--version` answer at once, before any later argument or the environment is
/// read; every error names the flag or environment variable at fault and
/// quotes the bad value (except a secret's). Environment variables not named
/// by an option are ignored, and a variable whose flag was given is not read.
extension GatewayConfiguration {
    /// Reads `arguments` (without the program name) and `environment`.
    static func parse(arguments: [String], environment: [String: String])
        throws(ConfigurationError) -> CommandLineOutcome
    {
        var configuration = GatewayConfiguration()
        var givenAsFlag: Set<String> = []
        var index = arguments.startIndex

        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { return .help(usage) }
            if argument == "--version" { return .version(version) }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ConfigurationError(message: argument.hasPrefix("-") && argument != "-" && argument != "--"
                    ? "unrecognized option \(OptionValue.quoted(argument))"
                    : "unexpected argument \(OptionValue.quoted(argument)) (the gateway takes only options)")
            }

            let body = argument.dropFirst(2)
            let name = body.prefix { $0 != "=" }
            let inlineValue = name.endIndex < body.endIndex ? String(body[body.index(after: name.endIndex)...]) : nil
            if name == "help" || name == "version" {
                throw ConfigurationError(message: "option '--\(name)' does not take a value")
            }
            guard let option = GatewayOptions.named(name) else {
                throw ConfigurationError(message: "unrecognized option \(OptionValue.quoted("--" + String(name)))")
            }

            let value: String
            switch (option.kind, inlineValue) {
            case (_, let inline?):
                value = inline
            case (.toggle, nil):
                value = "true"
            case (.value, nil):
                // A following flag is not taken as the value: `--host --port 80`
                // is a forgotten value, not a host named "--port".
                guard index < arguments.endIndex, !arguments[index].hasPrefix("--") else {
                    throw ConfigurationError(message: "option '\(option.flag)' needs a value")
                }
                value = arguments[index]
                index += 1
            }
            try apply(option, value, from: option.flag, to: &configuration)
            givenAsFlag.insert(option.name)
        }

        for option in GatewayOptions.all where !givenAsFlag.contains(option.name) {
            if let value = environment[option.environmentVariable] {
                try apply(option, value, from: option.environmentVariable, to: &configuration)
            }
        }

        switch (configuration.tlsCertificate, configuration.tlsKey) {
        case (nil, nil), (.some, .some):
            break
        case (.some, nil):
            throw ConfigurationError(message: "--tls-cert (or SSE_GATEWAY_TLS_CERT) was given without "
                + "--tls-key (or SSE_GATEWAY_TLS_KEY); give both to serve HTTPS")
        case (nil, .some):
            throw ConfigurationError(message: "--tls-key (or SSE_GATEWAY_TLS_KEY) was given without "
                + "--tls-cert (or SSE_GATEWAY_TLS_CERT); give both to serve HTTPS")
        }
        try checkTokenOptions(configuration)
        try checkRedisOptions(configuration)
        return .run(configuration)
    }

    /// The token options that only make sense together.
    private static func checkTokenOptions(_ configuration: GatewayConfiguration) throws(ConfigurationError) {
        let secret = "--jwt-secret (or SSE_GATEWAY_JWT_SECRET)"
        let publicKey = "--jwt-public-key (or SSE_GATEWAY_JWT_PUBLIC_KEY)"
        if configuration.jwtSecret != nil, configuration.jwtPublicKey != nil {
            throw ConfigurationError(message: "\(secret) and \(publicKey) were both given; "
                + "the key decides the algorithm, so give one")
        }
        let hasKey = configuration.jwtSecret != nil || configuration.jwtPublicKey != nil
        if configuration.subscribeAuth == .token, !hasKey {
            throw ConfigurationError(message: "--subscribe-auth token (or SSE_GATEWAY_SUBSCRIBE_AUTH) needs a key "
                + "to check tokens with: give \(secret) or \(publicKey)")
        }
        if configuration.jwtAudience != nil, !hasKey {
            throw ConfigurationError(message: "--jwt-audience (or SSE_GATEWAY_JWT_AUDIENCE) was given without a key: "
                + "give \(secret) or \(publicKey)")
        }
    }

    /// `--redis-min-replicas` asks for replicas of a Redis: without `--redis` there is none.
    private static func checkRedisOptions(_ configuration: GatewayConfiguration) throws(ConfigurationError) {
        if configuration.redisMinReplicas > 0, configuration.redis == nil {
            throw ConfigurationError(message: "--redis-min-replicas (or SSE_GATEWAY_REDIS_MIN_REPLICAS) needs --redis "
                + "(or SSE_GATEWAY_REDIS): without Redis there are no replicas")
        }
    }

    /// Runs `option`'s reader, naming `source` (the flag or the variable) on failure.
    private static func apply(_ option: GatewayOption, _ value: String, from source: String,
                              to configuration: inout GatewayConfiguration) throws(ConfigurationError)
    {
        do {
            try option.apply(&configuration, value)
        } catch {
            let shown = option.isSecret ? "" : " \(OptionValue.quoted(value))"
            throw ConfigurationError(message: "invalid value\(shown) for \(source): \(error.expectation)")
        }
    }
}
