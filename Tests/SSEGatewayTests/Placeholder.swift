import Testing

@Test func placeholderSSEGateway() {}
