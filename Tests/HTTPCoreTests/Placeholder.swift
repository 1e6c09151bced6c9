import Testing

@Test func placeholderHTTPCore() {}
